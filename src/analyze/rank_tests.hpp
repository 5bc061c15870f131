// The two tests behind nsel diff's verdicts (an analyze internal): the Mann-Whitney U test on
// per-step values and Welch's t-test on instance durations given by summary statistics.
#pragma once

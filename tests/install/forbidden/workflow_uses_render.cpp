// Must not compile: the workflows return results and the render room draws them (it sits above
// workflow), so workflow's include view has no nsel/render/.
#include "nsel/render/report.hpp"

// Must not compile: analyze computes and never draws, so its include view has no nsel/render/.
#include "nsel/render/report.hpp"

// The outputs of `nsel plan`: for one worker (or one rank of it), whether it is profiled and
// why, its windows, capture, nsys options, command and environment; and one JSON object per
// worker and line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nsel/core/plan.hpp"
#include "nsel/step/gpu_probe.hpp"

namespace nsel {

// Each line's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kPlanJsonSchema = "nsel.plan/1";

// The plan's lines, each ending in a line feed. `label` names it (the worker, or "<worker> rank
// N"); `probe`: the node's GPU probe when it was asked, else null; `program_given`: the command
// ends in the program given, else in " PROGRAM [ARGS...]"; `brief`: the verdict line alone (one
// line per worker and rank with --ranks).
std::string render_plan_text(const WorkerPlan& plan, const GpuProbe* probe, bool program_given,
                             const std::string& label, bool brief);
// "schema" first, then the plan's keys in their sorted order (as before the schema id).
nlohmann::ordered_json render_plan_json(const WorkerPlan& plan, const GpuProbe* probe);

}  // namespace nsel

#pragma once
// `scheduler-extender inspect`: asks the daemon's admin port (--admin URL, default
// http://127.0.0.1:8889; in a cluster through `kubectl port-forward`) and prints a table
// (inspect_tables.h): every node by default, --node NAME, --pools, or --pod NAMESPACE/NAME.
// Exit status 0, 1 when the daemon answered an error (the pod is not known, ...), 2 for a usage
// error or an unreachable daemon. Runs on the calling thread.
#include <string>

namespace extender::inspect {

std::string inspect_usage();
int run_inspect_command(int argc, const char* const* argv);

}  // namespace extender::inspect

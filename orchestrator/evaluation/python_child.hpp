#pragma once
/// The PyTorch side of an imported problem, run as a child the way a harness child runs: the
/// embedded pytorch_side.py written into a folder of the caller's, started by this program's
/// own `__confined-python` shim, which confines itself with Landlock (that folder read-write,
/// the named inputs and the interpreter's libraries read-only, the GPU's files only when asked,
/// no network), scrubs the environment, points HOME and TMPDIR into the folder, caps the size of
/// what it writes and only then starts the interpreter. Whatever a problem's Python does, it
/// does there; what comes back (OUT.json) is read as untrusted input.

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/runner_process.hpp"

namespace cuopt {

/// One line saying why no interpreter with torch is usable, or why the child failed.
class python_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct python_interpreter {
    std::string path;           // as found (an absolute path)
    std::string torch_version;  // torch.__version__
    std::string python_version;
    /// Folders the interpreter reads: its prefixes and every sys.path entry (read-only rules).
    std::vector<std::filesystem::path> roots;
    bool cuda = false;  // torch.cuda.is_available() outside the sandbox
};

/// The interpreter: `setting` (--python, the config's `python`) when given, else the first of
/// `python3` on PATH and /usr/bin/python3 that imports torch. Throws python_error in one line
/// naming what was tried.
python_interpreter find_python(const std::string& setting, process_runner& runner);

struct python_job {
    std::string mode;                             // introspect | oracle
    std::filesystem::path folder;                 // holds job.json; the child writes out.json
    std::vector<std::filesystem::path> readable;  // more it may read (the inputs it is given)
    bool gpu = false;                             // the driver's files too
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

/// Runs pytorch_side.py MODE on FOLDER/job.json; the text of FOLDER/out.json. Throws
/// python_error with the child's last lines when it fails or writes no answer.
std::string run_pytorch_side(const python_interpreter& python, const python_job& job,
                             process_runner& runner);

/// `text` with every control character a space: what a child said, safe to print.
std::string printable(std::string text);

/// The shim's side (`cuda-optimizer __confined-python FOLDER cpu|gpu PYTHON MODE [READ...]`):
/// confines itself and execs the interpreter; returns only on failure (its exit code).
int serve_confined_python(int argc, char** argv);

}  // namespace cuopt

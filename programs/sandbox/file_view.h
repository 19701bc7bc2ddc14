// What a sandboxed program may open (Landlock, Linux 5.13 and later): the
// system's libraries, a few devices, its own /proc directory and its copy
// of the program, read-only, and its scratch directory, read-write.
// Nothing else of the host, not even a world-readable file (/etc/passwd, a
// home directory, another run's files). Applied by the program's process
// right before execve; no process of the run can widen it afterwards. The
// lists are the policy; restrictFiles() the mechanism.
#pragma once

namespace kiln::sandbox {

// Directories of shared libraries and the dynamic loader (merged-/usr or
// not): readable and mappable. Those the host lacks are skipped.
inline constexpr const char* kLibraryDirectories[] = {
    "/lib",       "/lib32",     "/lib64",      "/libx32",       "/usr/lib",
    "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/local/lib"};
// Single files the loader and the C library read.
inline constexpr const char* kLoaderFiles[] = {"/etc/ld.so.cache"};
// Devices a program may read and write.
inline constexpr const char* kDeviceFiles[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                               "/dev/urandom"};

// The highest Landlock ABI this kernel offers; 0 without Landlock (an old
// kernel, or one built or booted without it): FileConfinement::kernelAbi().
int landlockAbi();

struct FileView {
  int abi = 0;                    // landlockAbi(), looked up before fork
  const char* program = nullptr;  // the program's copy: read and execute
  const char* scratch = nullptr;  // its working directory: anything
};

// Restricts the calling process and what it executes to `view` (after
// fork: system calls only, no malloc). Needs no_new_privs set. false with
// errno set when the kernel refused.
bool restrictFiles(const FileView& view);

}  // namespace kiln::sandbox

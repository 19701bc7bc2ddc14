#include "python/src/status_error.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace kiln::python {

std::string_view errorClassName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kTimeout:
      return "Timeout";
    case ErrorCode::kDisconnected:
      return "SessionLost";
    case ErrorCode::kOverloaded:
      return "Overloaded";
    case ErrorCode::kCompileError:
      return "CompileError";
    case ErrorCode::kPermissionDenied:
      return "PermissionDenied";
    case ErrorCode::kUnimplemented:
      return "Unimplemented";
    case ErrorCode::kOk:
    case ErrorCode::kInternal:
      break;
  }
  return "InternalError";
}

void registerStatusTranslator() {
  // The classes live in kiln/errors.py (multiple inheritance from ValueError,
  // KeyError, TimeoutError... is plain Python there); they are looked up when
  // an error happens, so the extension holds no Python objects of its own.
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const StatusError& error) {
      std::string name(errorClassName(error.status().code()));
      py::object type;
      try {
        type = py::module_::import("kiln.errors").attr(name.c_str());
      } catch (py::error_already_set&) {
        // kiln._kiln imported on its own, outside the kiln package.
        type = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
      }
      if (!error.actionsApplied()) {
        PyErr_SetString(type.ptr(), error.what());
        return;
      }
      py::object instance = type(error.what());
      instance.attr("actions_applied") = *error.actionsApplied();
      PyErr_SetObject(type.ptr(), instance.ptr());
    }
  });
}

}  // namespace kiln::python

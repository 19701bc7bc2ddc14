#include "python/src/status_error.h"

#include <pybind11/pybind11.h>

#include <iterator>

namespace py = pybind11;

namespace kiln::python {

std::string_view errorClassName(ErrorCode code) {
  // ok is no error; a code this build does not know is a bug.
  const auto value = static_cast<std::size_t>(code);
  if (code == ErrorCode::kOk || value >= std::size(kErrorCodePythonClasses)) {
    return "InternalError";
  }
  return kErrorCodePythonClasses[value];
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

// A move-only `void()` callable (std::move_only_function is C++23): tasks own
// their request message, which cannot be copied.
#pragma once

#include <memory>
#include <utility>

namespace kiln {

class UniqueTask {
 public:
  UniqueTask() = default;
  template <class F>
  UniqueTask(F&& f)
      : impl_(std::make_unique<Impl<std::decay_t<F>>>(std::forward<F>(f))) {}  // NOLINT
  void operator()() { impl_->run(); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void run() = 0;
  };
  template <class F>
  struct Impl final : Base {
    explicit Impl(F&& f) : fn(std::move(f)) {}
    explicit Impl(const F& f) : fn(f) {}
    void run() override { fn(); }
    F fn;
  };
  std::unique_ptr<Base> impl_;
};

}  // namespace kiln

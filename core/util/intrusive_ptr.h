// core/util/intrusive_ptr.h: reference counting stored in the object (one allocation per object).
// Tensor handles, storages and boxed list values use it; the count is atomic so handles may cross
// threads, and `use_count()` is exact, which AccumulateGrad's "steal the gradient" check relies on.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace strata {

// Base for intrusively counted objects. `T` must derive from RefCounted<T>.
template <typename T>
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) : refcount_(0) {}
  RefCounted& operator=(const RefCounted&) { return *this; }

  std::uint32_t use_count() const noexcept { return refcount_.load(std::memory_order_relaxed); }

 protected:
  ~RefCounted() = default;

 private:
  template <typename U>
  friend class IntrusivePtr;
  mutable std::atomic<std::uint32_t> refcount_{0};
};

// The value an empty IntrusivePtr<T> holds: null, unless T names a sentinel object instead (as
// TensorImpl does, Note [An undefined tensor points at a sentinel]). An empty pointer never counts
// references on it.
template <typename T>
struct IntrusiveNull {
  static constexpr T* singleton() noexcept { return nullptr; }
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() noexcept = default;
  IntrusivePtr(std::nullptr_t) noexcept {}
  // Takes shared ownership of `raw` (which may already be owned by other IntrusivePtrs).
  explicit IntrusivePtr(T* raw) noexcept : ptr_(raw) { retain(); }
  IntrusivePtr(const IntrusivePtr& other) noexcept : ptr_(other.ptr_) { retain(); }
  IntrusivePtr(IntrusivePtr&& other) noexcept : ptr_(std::exchange(other.ptr_, null())) {}
  IntrusivePtr& operator=(const IntrusivePtr& other) noexcept {
    IntrusivePtr(other).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& other) noexcept {
    IntrusivePtr(std::move(other)).swap(*this);
    return *this;
  }
  ~IntrusivePtr() { reset(); }

  template <typename... Args>
  static IntrusivePtr make(Args&&... args) {
    return adopt(new T(std::forward<Args>(args)...));
  }
  // Takes the first reference to a freshly constructed object (a plain store, no atomic RMW).
  static IntrusivePtr adopt(T* fresh) noexcept {
    IntrusivePtr p;
    p.ptr_ = fresh;
    fresh->refcount_.store(1, std::memory_order_relaxed);
    return p;
  }
  // Takes over a reference a raw pointer holds (one that release() gave up), without counting.
  static IntrusivePtr reclaim(T* owned) noexcept {
    IntrusivePtr p;
    p.ptr_ = owned;
    return p;
  }
  // Gives up this pointer's reference without releasing it: the caller now holds it, as a raw pointer.
  [[nodiscard]] T* release() noexcept { return std::exchange(ptr_, null()); }
  // A new reference to an object known through a pointer that holds none (std::weak_ptr::lock), or
  // null if its count has already reached zero (it is being destroyed). The caller must keep the
  // memory from being freed meanwhile (a leaf's lookup holds the lock the dying AccumulateGrad's
  // destructor takes), and the object must say it is `weakly_referenced()`.
  static IntrusivePtr retain_if_alive(T* raw) noexcept {
    std::uint32_t n = raw->refcount_.load(std::memory_order_relaxed);
    while (n != 0 && !raw->refcount_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) {
    }
    return n != 0 ? reclaim(raw) : IntrusivePtr();
  }

  // Note [Releasing a sole reference]
  // When the count is 1 the caller holds the only reference, and nobody else can make a new one, so
  // the object can be destroyed without the atomic decrement. Temporaries die this way on the hot path.
  // An object that can gain a reference through retain_if_alive() is `weakly_referenced()` and always
  // counts down: another thread may be taking a reference to it just then.
  void reset() noexcept {
    if (ptr_ != null() && ((!weakly_referenced(ptr_) && ptr_->refcount_.load(std::memory_order_acquire) == 1) ||
                 ptr_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
      if constexpr (requires { T::destroy(ptr_); }) {
        T::destroy(ptr_);  // objects that own a custom allocation (see StorageImpl)
      } else {
        delete ptr_;
      }
    }
    ptr_ = null();
  }
  void swap(IntrusivePtr& other) noexcept { std::swap(ptr_, other.ptr_); }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != null(); }
  std::uint32_t use_count() const noexcept { return ptr_ != null() ? ptr_->use_count() : 0; }

  friend bool operator==(const IntrusivePtr& a, const IntrusivePtr& b) { return a.ptr_ == b.ptr_; }

 private:
  static bool weakly_referenced(const T* p) noexcept {
    if constexpr (requires { p->weakly_referenced(); }) return p->weakly_referenced();
    else return false;
  }
  static constexpr T* null() noexcept { return IntrusiveNull<T>::singleton(); }
  void retain() noexcept {
    if (ptr_ != null()) ptr_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  T* ptr_ = null();
};

}  // namespace strata

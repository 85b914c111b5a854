// core/util/small_mutex.h: SmallMutex, a mutex of one byte for state every tensor may carry (a leaf's
// AutogradMeta), where std::mutex's 40 bytes would grow every fresh tensor's block. A futex-style
// lock over C++20 atomic wait/notify: a compare-exchange to take it uncontended, a sleep otherwise.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata {

// Note [A leaf's mutex is one byte]
// PyTorch's AutogradMeta has a std::mutex (mutex_) that guards a leaf's gradient accumulator, and
// its AccumulateGrad node another that it holds while accumulating. strata keeps the same locks in
// the same places, but every fresh tensor's block reserves room
// for an AutogradMeta (Note [One allocation per fresh tensor]), and 40 more bytes there would push
// the block of a small tensor into the next 64-byte size class. SmallMutex fits in the padding the meta
// already has. It is the classic three-state futex mutex (unlocked, locked, locked with sleepers
// possible): taking a free lock is one compare-exchange (acquire) and releasing it one exchange
// (release), the same atomic work as std::mutex without its call; a thread that finds it taken marks
// it contended and sleeps in atomic::wait, and the unlock that sees the mark wakes one sleeper. It is
// not recursive, and it is meant for short critical sections.
class SmallMutex {
 public:
  SmallMutex() = default;
  SmallMutex(const SmallMutex&) = delete;
  SmallMutex& operator=(const SmallMutex&) = delete;

  void lock() noexcept {
    std::uint8_t expected = kUnlocked;
    if (!state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed)) [[unlikely]]
      lock_contended();
  }
  bool try_lock() noexcept {
    std::uint8_t expected = kUnlocked;
    return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    if (state_.exchange(kUnlocked, std::memory_order_release) == kContended) [[unlikely]]
      state_.notify_one();
  }

 private:
  static constexpr std::uint8_t kUnlocked = 0;
  static constexpr std::uint8_t kLocked = 1;
  static constexpr std::uint8_t kContended = 2;  // locked, and a thread may be asleep waiting for it

  // Marks the lock contended; owns it if it was free, else sleeps until it changes and tries again. A
  // thread that takes it this way leaves it marked contended (it cannot tell whether others sleep), so
  // its unlock wakes one sleeper, if any.
  [[gnu::cold, gnu::noinline]] void lock_contended() noexcept {
    while (state_.exchange(kContended, std::memory_order_acquire) != kUnlocked) state_.wait(kContended, std::memory_order_relaxed);
  }

  std::atomic<std::uint8_t> state_{kUnlocked};
};

}  // namespace strata

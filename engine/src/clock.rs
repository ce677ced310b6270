//! A party's own clocks: simulated true time mapped to what the party reads.
//!
//! Each instance, Redis node, the database and the consensus store reads its own
//! clock. A clock is piecewise linear: a step (`clock_jump`) moves it, a drift
//! (`clock_drift`) changes its rate in parts per million.
//!
//! Every party has two readings of one oscillator (see [`ClockChange`]): the
//! wall clock, which a step moves, and a monotonic clock, which no step
//! moves. Nearly everything in the lab runs on the wall clock, so a jump
//! moves timers and TTLs alike: a simplification the UI states (a real
//! client's timeouts mostly run on a monotonic clock). The consensus store's
//! leases run on the monotonic clock, as etcd's lessor measures them with
//! Go's monotonic time.

/// Which of a party's clocks a deadline is measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// The time of day: stepped by `clock_jump`, and the clock Redis expires
    /// keys by (its `mstime()` is `gettimeofday`).
    Wall,
    /// Time since some start: never stepped, as `CLOCK_MONOTONIC` is not by
    /// `settimeofday`, and the clock Go's `time.Now()` subtracts by, so
    /// etcd's lease expiry (`lease/lessor.go`, `Lease.Remaining`) is measured on it.
    Monotonic,
}

/// What a fault does to a party's clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockChange {
    /// The wall clock is stepped by `by_ms` (NTP's step, an operator's
    /// `date -s`); the monotonic clock is not.
    Jump { by_ms: i64 },
    /// The oscillator runs `ppm` parts per million fast (or slow): both
    /// clocks count its ticks, so both drift. Linux's `CLOCK_MONOTONIC`,
    /// which Go reads, also follows NTP's rate corrections; only a step
    /// separates it from the wall clock.
    Drift { ppm: i64 },
}

impl ClockChange {
    /// Whether the change moves the monotonic clock too.
    pub fn moves_monotonic(self) -> bool {
        match self {
            ClockChange::Jump { .. } => false,
            ClockChange::Drift { .. } => true,
        }
    }

    /// Applies the change to a clock of the party at true time `now_ms`.
    pub fn apply(self, clock: &mut LocalClock, now_ms: u64) {
        match self {
            ClockChange::Jump { by_ms } => clock.jump(now_ms, by_ms),
            ClockChange::Drift { ppm } => clock.set_drift(now_ms, ppm),
        }
    }
}

/// How one party's clock reads at every true instant from its last change on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalClock {
    base_true_ms: u64,
    base_local_ms: i64,
    drift_ppm: i64,
}

const PPM: i64 = 1_000_000;

impl LocalClock {
    /// What the clock reads at true time `true_ms` (not before its last change).
    pub fn local_at(&self, true_ms: u64) -> i64 {
        let elapsed = i64::try_from(true_ms.saturating_sub(self.base_true_ms)).unwrap_or(i64::MAX / 2);
        if self.drift_ppm == 0 {
            return self.base_local_ms + elapsed;
        }
        // Floor division, so a slow clock never reads ahead of itself by a rounding.
        self.base_local_ms + elapsed + (elapsed * self.drift_ppm).div_euclid(PPM)
    }

    /// The first true instant, not before `not_before_ms`, at which the clock
    /// reads at least `local_ms`.
    pub fn true_when(&self, local_ms: i64, not_before_ms: u64) -> u64 {
        let from = not_before_ms.max(self.base_true_ms);
        if self.drift_ppm == 0 {
            // Without drift the clock reads `base_local_ms` plus the time
            // elapsed: the deadline is as far past `base_true_ms` as `local_ms`
            // is past `base_local_ms`, or `from` if that is earlier.
            let ahead_ms = u64::try_from(local_ms.saturating_sub(self.base_local_ms)).unwrap_or(0);
            return self.base_true_ms.saturating_add(ahead_ms).max(from);
        }
        if self.local_at(from) >= local_ms {
            return from;
        }
        let wanted = local_ms - self.base_local_ms;
        // Invert local = elapsed × (1 + ppm/1e6); integer rounding is fixed up below.
        let rate = PPM + self.drift_ppm;
        let mut elapsed = (wanted * PPM + rate - 1) / rate;
        let mut at = self.base_true_ms + u64::try_from(elapsed.max(0)).unwrap_or(0);
        while self.local_at(at) < local_ms {
            elapsed += 1;
            at = self.base_true_ms + u64::try_from(elapsed).unwrap_or(0);
        }
        while at > from && self.local_at(at - 1) >= local_ms {
            at -= 1;
        }
        at.max(from)
    }

    /// Steps the clock by `by_ms` at true time `now_ms`.
    pub fn jump(&mut self, now_ms: u64, by_ms: i64) {
        let local = self.local_at(now_ms);
        *self = LocalClock { base_true_ms: now_ms, base_local_ms: local + by_ms, drift_ppm: self.drift_ppm };
    }

    /// From true time `now_ms` on, the clock runs `ppm` parts per million fast (or slow).
    pub fn set_drift(&mut self, now_ms: u64, ppm: i64) {
        let local = self.local_at(now_ms);
        *self = LocalClock { base_true_ms: now_ms, base_local_ms: local, drift_ppm: ppm };
    }

    /// The drift in force, in parts per million.
    pub fn drift_ppm(&self) -> i64 {
        self.drift_ppm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_true_clock_reads_true_time() {
        let clock = LocalClock::default();
        assert_eq!(clock.local_at(12_345), 12_345);
        assert_eq!(clock.true_when(20_000, 0), 20_000);
        assert_eq!(clock.true_when(5, 100), 100, "a deadline already past fires now");
    }

    #[test]
    fn clocks_without_drift_agree_with_the_general_inversion() {
        // The drift-free shortcut must give the defining answer: the first
        // instant, not before `not_before_ms` or the last change, at which the
        // clock (here stepped back 3 s at 5 s) reads at least `local_ms`.
        let mut clock = LocalClock::default();
        clock.jump(5_000, -3_000);
        for local_ms in [-10_000, 0, 1_999, 2_000, 2_001, 7_000, 900_000] {
            for not_before_ms in [0, 4_999, 5_000, 6_000, 1_000_000] {
                let at = clock.true_when(local_ms, not_before_ms);
                let from = not_before_ms.max(5_000);
                assert!(at >= from);
                assert!(clock.local_at(at) >= local_ms || at == from, "{local_ms} {not_before_ms}");
                assert!(at == from || clock.local_at(at - 1) < local_ms, "the first such instant");
            }
        }
    }

    #[test]
    fn jumps_and_drift_move_deadlines() {
        let mut clock = LocalClock::default();
        clock.jump(1_000, 60_000);
        assert_eq!(clock.local_at(1_000), 61_000);
        assert_eq!(clock.true_when(91_000, 1_000), 31_000, "a forward jump brings deadlines closer");
        clock.set_drift(31_000, 100_000); // 10 % fast
        assert_eq!(clock.local_at(41_000), 91_000 + 11_000);
        let at = clock.true_when(200_000, 31_000);
        assert!(clock.local_at(at) >= 200_000 && clock.local_at(at - 1) < 200_000);
        clock.set_drift(at, -500_000);
        let slow = clock.true_when(clock.local_at(at) + 1_000, at);
        assert_eq!(slow - at, 2_000, "a clock at half speed takes twice as long");
    }
}

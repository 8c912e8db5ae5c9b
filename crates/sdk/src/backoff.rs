//! Delays between reconnect attempts: exponential, capped, with jitter.
//!
//! Jitter matters because a server restart drops every client at once; without it they would
//! all come back in the same millisecond, attempt after attempt. Randomness is passed in, so
//! this stays a pure function the tests can pin.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// Delay before the first attempt, in ms.
    pub initial_ms: f64,
    /// Longest delay, in ms.
    pub max_ms: f64,
    /// Failed attempts in a row after which the client gives up (`None`: never).
    pub max_attempts: Option<u32>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial_ms: 500.0,
            max_ms: 15_000.0,
            max_attempts: None,
        }
    }
}

impl Backoff {
    /// The delay before attempt `attempt` (from 1), given `random` in `[0, 1)`: half of the
    /// capped exponential delay is fixed, half random ("equal jitter"), so no client retries
    /// immediately and none waits longer than the cap.
    pub fn delay(&self, attempt: u32, random: f64) -> f64 {
        let exp = 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
        let cap = (self.initial_ms * exp).min(self.max_ms).max(0.0);
        let random = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.5
        };
        cap / 2.0 + cap / 2.0 * random
    }

    /// Whether attempt `attempt` may be made.
    pub fn allows(&self, attempt: u32) -> bool {
        self.max_attempts.is_none_or(|max| attempt <= max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap_with_jitter_in_the_upper_half() {
        let b = Backoff::default();
        assert_eq!(b.delay(1, 0.0), 250.0);
        assert_eq!(b.delay(1, 1.0), 500.0);
        assert_eq!(b.delay(2, 1.0), 1000.0);
        assert_eq!(b.delay(3, 0.5), 1500.0);
        assert_eq!(b.delay(40, 1.0), 15_000.0);
        assert_eq!(b.delay(u32::MAX, 0.0), 7_500.0);
    }

    #[test]
    fn bad_randomness_and_limits_do_not_escape_the_bounds() {
        let b = Backoff {
            max_attempts: Some(3),
            ..Backoff::default()
        };
        assert_eq!(b.delay(1, f64::NAN), 375.0);
        assert_eq!(b.delay(1, 7.0), 500.0);
        assert!(b.allows(3));
        assert!(!b.allows(4));
        assert!(Backoff::default().allows(u32::MAX));
    }
}

//! When the reads of a model's stream are published: at once, or together with the ones after.
//!
//! Providers send one HTTP chunk per token and the runtime delivers each as its own read:
//! published one by one, a fast stream costs a turn of the drive loop, an encoding per dialect
//! and a send per socket for every token, and when the isolate is busy (many sessions
//! streaming at once) those turns queue behind each other. The decoder merges the deltas of
//! reads it holds, so what several reads brought goes out as one event and one send per socket.
//! (The log no longer costs a commit per read: deltas are logged in batches after they are sent,
//! session/publish.rs. This batching came first, when each read was its own commit, and still
//! pays when the isolate is busy.)
//!
//! The rules, for one stream:
//! - a read that comes while nothing is in flight is published at once: the first token after
//!   a pause costs no added latency, and at a model's usual pace (tens of ms per token) every
//!   token goes out as it comes;
//! - a publish arms a flush, which fires once its write is durable and a quiet gap has passed;
//!   reads arriving before it are held, and the flush publishes them;
//! - when the isolate is busy (a flush fired late: other sessions' commits and reads ran
//!   first), a flush that finds reads still coming keeps gathering instead, until
//!   `max_reads` reads are held or the oldest has waited `max_hold_ms`. The bound is a count
//!   because the cost to amortize is a commit per read; a time bound alone would shrink the
//!   batches as the isolate gets busier, which makes it busier (at 50 sessions, a 50 ms bound
//!   still gave one commit per 8 tokens and a quarter of the relay's throughput);
//! - a flush that finds nothing held ends the batch, and the busy mark with it.
//!
//! It only decides; the session reads, publishes and arms the timers (sans-IO, so the rules are
//! tested here without a runtime).

/// How long after a durable publish the next batch goes (ms): what a fast stream sends in it
/// is merged; a model at a usual pace (tens of ms per token) sends nothing in it, and each of
/// its tokens goes out as it comes. It is also the longest a busy isolate's turn may be without
/// a batch ending early (measured: 1 ms let batches collapse to 6 reads at 50 sessions).
pub const QUIET_GAP_MS: f64 = 4.0;

/// A flush that fires this much later than armed (ms) marks the isolate busy: a commit and a
/// quiet gap take well under it when the isolate has time.
const LATE_MS: f64 = 3.0 * QUIET_GAP_MS;

/// What the session does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Publish what the decoder holds now, then arm the flush (commit, then a quiet gap).
    Publish,
    /// Keep the read in the decoder; the armed flush (or a later read) publishes it.
    Hold,
    /// Arm a plain quiet gap and look again.
    Wait,
    /// Nothing is held and nothing is coming: the batch is over, no flush armed.
    Quiet,
}

/// The batching state of one model stream.
#[derive(Debug, Clone)]
pub struct Batching {
    max_reads: u32,
    max_hold_ms: f64,
    /// When the pending flush was armed; `None` while the stream is quiet.
    armed: Option<f64>,
    /// When the oldest held read came, and how many are held.
    held: Option<(f64, u32)>,
    /// Whether a read came since the flush was armed.
    arrived: bool,
    /// Whether a flush of this batch fired late.
    busy: bool,
}

impl Batching {
    /// `max_reads` ≤ 1 turns batching off: every read is published as it comes.
    pub fn new(max_reads: u32, max_hold_ms: f64) -> Batching {
        Batching {
            max_reads,
            max_hold_ms,
            armed: None,
            held: None,
            arrived: false,
            busy: false,
        }
    }

    /// A read came at `now` and is in the decoder.
    pub fn read(&mut self, now: f64) -> Step {
        if self.armed.is_none() || self.max_reads <= 1 {
            return Step::Publish;
        }
        let (since, reads) = self.held.get_or_insert((now, 0));
        *reads += 1;
        self.arrived = true;
        if *reads >= self.max_reads || now - *since >= self.max_hold_ms {
            Step::Publish
        } else {
            Step::Hold
        }
    }

    /// The armed flush fired at `now`.
    pub fn flush(&mut self, now: f64) -> Step {
        let armed = self.armed.take().unwrap_or(now);
        let Some((since, _)) = self.held else {
            self.busy = false;
            return Step::Quiet;
        };
        self.busy |= now - armed > LATE_MS;
        let flowing = std::mem::take(&mut self.arrived);
        if self.busy && flowing && now - since < self.max_hold_ms {
            self.armed = Some(now);
            return Step::Wait;
        }
        Step::Publish
    }

    /// The session published at `now` (after [`Step::Publish`]) and armed the flush, unless
    /// batching is off.
    pub fn published(&mut self, now: f64) {
        self.held = None;
        self.arrived = false;
        self.armed = (self.max_reads > 1).then_some(now);
    }

    /// Whether a flush is to be armed (the session keeps the timer).
    pub fn is_armed(&self) -> bool {
        self.armed.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Step::*;

    /// Runs reads and flushes, publishing when told; returns the steps taken.
    fn run(b: &mut Batching, script: &[(&str, f64)]) -> Vec<Step> {
        script
            .iter()
            .map(|&(what, now)| {
                let step = if what == "read" {
                    b.read(now)
                } else {
                    b.flush(now)
                };
                if step == Publish {
                    b.published(now);
                }
                step
            })
            .collect()
    }

    #[test]
    fn a_paced_stream_publishes_every_read_at_once() {
        let mut b = Batching::new(64, 250.0);
        let steps = run(
            &mut b,
            &[
                ("read", 0.0),
                ("flush", 4.5),
                ("read", 20.0),
                ("flush", 24.5),
                ("read", 40.0),
            ],
        );
        assert_eq!(steps, [Publish, Quiet, Publish, Quiet, Publish]);
    }

    #[test]
    fn reads_during_a_commit_go_out_together_at_the_flush() {
        let mut b = Batching::new(64, 250.0);
        let steps = run(
            &mut b,
            &[
                ("read", 0.0),
                ("read", 1.0),
                ("read", 2.0),
                ("flush", 4.5),
                ("read", 5.0),
                ("flush", 9.0),
                ("flush", 13.0),
            ],
        );
        assert_eq!(steps, [Publish, Hold, Hold, Publish, Hold, Publish, Quiet]);
        assert!(!b.is_armed());
    }

    #[test]
    fn a_busy_isolate_gathers_up_to_the_read_bound() {
        let mut b = Batching::new(4, 250.0);
        // The first flush fires 30 ms after its publish: busy, and reads keep coming.
        let steps = run(
            &mut b,
            &[
                ("read", 0.0),
                ("read", 10.0),
                ("flush", 30.0),
                ("read", 40.0),
                ("flush", 50.0),
                ("read", 60.0),
                ("read", 70.0),
            ],
        );
        assert_eq!(steps, [Publish, Hold, Wait, Hold, Wait, Hold, Publish]);
    }

    #[test]
    fn a_busy_batch_ends_at_the_time_bound_or_when_reads_stop() {
        let mut b = Batching::new(64, 100.0);
        let steps = run(
            &mut b,
            &[
                ("read", 0.0),
                ("read", 10.0),
                ("flush", 30.0), // late: busy, still flowing
                ("read", 60.0),
                ("flush", 90.0),  // flowing, oldest held 80 ms: wait
                ("read", 105.0),  // oldest held 95 ms
                ("flush", 115.0), // 105 ms: the time bound publishes
                ("read", 116.0),
                ("flush", 140.0), // busy, a read came since the publish: wait
                ("flush", 150.0), // nothing came since: publish
            ],
        );
        assert_eq!(
            steps,
            [Publish, Hold, Wait, Hold, Wait, Hold, Publish, Hold, Wait, Publish]
        );
    }

    #[test]
    fn the_busy_mark_ends_with_the_batch() {
        let mut b = Batching::new(64, 250.0);
        let steps = run(
            &mut b,
            &[
                ("read", 0.0),
                ("read", 1.0),
                ("flush", 40.0), // late: busy
                ("read", 41.0),
                ("flush", 45.0), // flowing: wait
                ("flush", 50.0), // nothing new came: publish
                ("flush", 55.0), // nothing held: quiet, busy cleared
                ("read", 100.0),
                ("read", 101.0),
                ("flush", 105.0), // on time, not busy: publish at once
            ],
        );
        assert_eq!(
            steps,
            [Publish, Hold, Wait, Hold, Wait, Publish, Quiet, Publish, Hold, Publish]
        );
    }

    #[test]
    fn one_read_bound_turns_batching_off() {
        let mut b = Batching::new(1, 250.0);
        let steps = run(&mut b, &[("read", 0.0), ("read", 0.5), ("read", 1.0)]);
        assert_eq!(steps, [Publish, Publish, Publish]);
        assert!(!b.is_armed());
    }
}

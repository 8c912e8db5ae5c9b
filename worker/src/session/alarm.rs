//! The session's one alarm, and everything it wakes the object for: approvals nobody
//! answered, a run orphaned by a restart (with or without a client), event logs past their
//! retention, and a session unused for `SESSION_TTL_DAYS`.
//!
//! A Durable Object has a single alarm, so [`Session::arm_alarm`] sets it to the earliest of
//! those deadlines each time one of them may have moved. While a run is active the alarm is a
//! watchdog, [`WATCHDOG_MS`] away: if the object restarts mid-run (a deploy, an eviction), the
//! alarm wakes the new instance, which resumes the run from its checkpoint — no client needed.

use weft_agent::engine::Input;

use super::Session;

/// How soon after a restart an orphaned run is picked up again, at the latest.
pub(super) const WATCHDOG_MS: i64 = 15_000;

/// How often, at most, the session's last use is written down (for `SESSION_TTL_DAYS`): a
/// write per message would be a row per message. (A tenth of the TTL when that is shorter.)
const TOUCH_EVERY_MS: i64 = 3_600_000;

impl Session {
    /// The alarm's work, in the order that keeps it short: a session past its TTL is deleted
    /// whole; old event logs are dropped; approvals past their deadline are refused; the alarm
    /// is set again; then the active run, if any, is driven (an orphan resumes here).
    pub(super) async fn on_alarm(&self) {
        let now = js_sys::Date::now() as i64;
        if self.expired_session(now) {
            return self.delete_session().await;
        }
        self.drop_old_event_logs(now);
        if self.load_active_run() {
            self.refuse_overdue_approvals(now);
        }
        self.arm_alarm().await;
        if self.load_active_run() {
            self.drive().await;
            self.arm_alarm().await;
        }
    }

    /// Sets the alarm to the earliest deadline the session has, or clears it.
    pub(super) async fn arm_alarm(&self) {
        let now = js_sys::Date::now() as i64;
        let store = self.store();
        let retry = now + WATCHDOG_MS;
        let watchdog = deadline(self.running().map(|on| on.then_some(retry)), retry, |e| {
            self.log_unreadable("whether a run is on", &e)
        });
        let timeout = self.settings.approval_timeout_ms as i64;
        let approval = self
            .run
            .borrow()
            .as_ref()
            .and_then(|r| r.waiting_approvals().filter_map(|(_, _, at)| at).min())
            .map(|asked| asked + timeout);
        // After the alarm could not delete a log (`drop_old_event_logs` logged why), it tries
        // again a watchdog's time later, not at once: at once would be alarm after alarm, each
        // failing alike.
        let retention = deadline(
            store
                .oldest_logged_run_end()
                .map(|end| end.map(|ended| ended + self.settings.event_retention_ms as i64)),
            retry,
            |e| self.log_unreadable("when the oldest event log ended", &e),
        )
        .map(|at| {
            store
                .event_logs_failed_at()
                .map_or(at, |failed| at.max(failed + WATCHDOG_MS))
        });
        let ttl = self.settings.session_ttl_ms.and_then(|ttl| {
            deadline(
                store.touched().map(|at| at.map(|at| at + ttl as i64)),
                retry,
                |e| self.log_unreadable("the session's last use", &e),
            )
        });
        let first = [approval, watchdog, retention, ttl]
            .into_iter()
            .flatten()
            .min();
        let storage = self.state.storage();
        let set = match first {
            // An i64 is an offset from now for set_alarm.
            Some(at) => storage.set_alarm((at - now).max(1)).await,
            None => storage.delete_alarm().await,
        };
        if let Err(e) = set {
            worker::console_error!("session alarm not set: {e}");
        }
    }

    /// A run left `running` by a restart and not in memory: the alarm picks it up at once, so
    /// the message that noticed it is handled without waiting for the run's model call.
    pub(super) async fn wake_orphan(&self) {
        if self.driving.get() || self.run.borrow().is_some() {
            return;
        }
        match self.store().active_run() {
            Ok(None) => return,
            Ok(Some(_)) => {}
            // Woken anyway: the alarm reads it again, and arms its watchdog while it cannot.
            Err(e) => self.log_unreadable("the active run", &e),
        }
        if let Err(e) = self.state.storage().set_alarm(1_i64).await {
            worker::console_error!("orphaned run not woken: {e}");
        }
    }

    /// Writes down that the session is in use, when a TTL is set, and re-arms the alarm for
    /// its new deadline.
    pub(super) async fn touch(&self) {
        let Some(ttl) = self.settings.session_ttl_ms else {
            return;
        };
        let every = TOUCH_EVERY_MS.min(ttl as i64 / 10);
        let now = js_sys::Date::now() as i64;
        let store = self.store();
        match store.touched() {
            Ok(Some(at)) if now - at < every => return,
            Ok(_) => {}
            // Written anyway: now is the session's last use whatever the row said.
            Err(e) => self.log_unreadable("the session's last use", &e),
        }
        if let Err(e) = store.touch(now) {
            worker::console_error!("session use not recorded: {e}");
            return;
        }
        self.arm_alarm().await;
    }

    fn expired_session(&self, now: i64) -> bool {
        let Some(ttl) = self.settings.session_ttl_ms else {
            return false;
        };
        let touched = match self.store().touched() {
            Ok(touched) => touched,
            // A session is deleted on what was read, never on what could not be.
            Err(e) => {
                self.log_unreadable("the session's last use", &e);
                return false;
            }
        };
        touched.is_some_and(|at| now - at >= ttl as i64) && !self.busy()
    }

    /// Deletes everything the session stored, alarm included; its sockets are closed first.
    async fn delete_session(&self) {
        for (ws, _) in self.sockets() {
            if let Err(e) = ws.close(Some(4410), Some("session expired")) {
                worker::console_warn!("socket of an expired session not closed: {e}");
            }
        }
        let storage = self.state.storage();
        if let Err(e) = storage.delete_all().await {
            worker::console_error!("expired session not deleted: {e}");
            return;
        }
        if let Err(e) = storage.delete_alarm().await {
            worker::console_error!("expired session's alarm not cleared: {e}");
        }
        *self.store.borrow_mut() = None;
    }

    fn drop_old_event_logs(&self, now: i64) {
        let before = now - self.settings.event_retention_ms as i64;
        if let Err(e) = self.store().drop_event_logs(before) {
            worker::console_error!("old event logs not deleted: {e}");
        }
    }

    fn refuse_overdue_approvals(&self, now: i64) {
        let timeout = self.settings.approval_timeout_ms as i64;
        let expired: Vec<(String, String)> = match self.run.borrow().as_ref() {
            Some(run) => run
                .waiting_approvals()
                .filter(|(_, _, at)| at.is_none_or(|at| at + timeout <= now))
                .map(|(id, name, _)| (id.to_string(), name.to_string()))
                .collect(),
            None => Vec::new(),
        };
        for (call_id, name) in expired {
            let secs = timeout / 1000;
            self.handle(Input::Refuse {
                call_id,
                reason: format!("nobody answered the approval of {name} within {secs} s"),
            });
        }
    }
}

/// A deadline as read from storage, or `retry` when it could not be read (`log` says why):
/// the alarm comes back to read it again instead of forgetting a run's watchdog, an event log
/// past its retention or the session's TTL.
fn deadline<E>(read: Result<Option<i64>, E>, retry: i64, log: impl FnOnce(E)) -> Option<i64> {
    match read {
        Ok(at) => at,
        Err(e) => {
            log(e);
            Some(retry)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_that_cannot_be_read_is_read_again_soon() {
        let mut logged = Vec::new();
        assert_eq!(deadline(Ok::<_, &str>(Some(9)), 5, |_| ()), Some(9));
        assert_eq!(deadline(Ok::<_, &str>(None), 5, |_| ()), None);
        assert_eq!(
            deadline(Err("disk I/O error"), 5, |e| logged.push(e)),
            Some(5)
        );
        assert_eq!(logged, ["disk I/O error"]);
    }
}

//! Limits that span sockets: a fixed one-minute [`Window`] of counted events, and the
//! [`Limiter`] object that counts the sessions each client creates (`SESSIONS_PER_MINUTE`).
//!
//! A per-socket limit is multiplied by opening more sockets, and a per-session one by naming
//! more sessions; only an object that sees every session a client creates can cap that. One
//! `Limiter` per client — a per-user token's `sub`, else the IP address — is that object. It
//! is asked only when a session is created (its first socket or link), so the common path, a
//! socket to an existing session, pays nothing. Its count lives in memory: an object evicted
//! after a quiet minute had nothing left to count.

use std::cell::Cell;

use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

/// Events counted in a fixed window of one minute.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Window {
    start: f64,
    count: u32,
}

impl Window {
    /// Counts one event at `now` (ms since the epoch): whether it is within `limit` a minute.
    /// A refused event is not counted.
    pub fn take(&mut self, now: f64, limit: u32) -> bool {
        // A clock that went back starts a new window rather than stretching the old one.
        if now - self.start >= 60_000.0 || now < self.start {
            self.start = now;
            self.count = 0;
        }
        if self.count >= limit {
            return false;
        }
        self.count += 1;
        true
    }
}

/// The session-creation counter of one client.
#[durable_object]
pub struct Limiter {
    window: Cell<Window>,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter")
            .field("window", &self.window.get())
            .finish()
    }
}

impl DurableObject for Limiter {
    fn new(_state: State, _env: Env) -> Self {
        Limiter {
            window: Cell::new(Window::default()),
        }
    }

    /// `GET …/take?limit=<n>`: 200 when one more session fits in this minute (and counts it),
    /// 429 when not.
    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        let limit = crate::query::get(&url, "limit")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut window = self.window.get();
        let fits = window.take(js_sys::Date::now(), limit);
        self.window.set(window);
        if fits {
            Response::ok("ok")
        } else {
            Response::error("too many new sessions", 429)
        }
    }
}

/// Asks `client`'s [`Limiter`] whether it may create one more session this minute. A limiter
/// that cannot be reached does not lock everyone out: the session is allowed and the failure
/// logged.
pub async fn may_create_session(env: &Env, client: &str, limit: u32) -> bool {
    let asked = async {
        let stub = env
            .durable_object("LIMITS")?
            .id_from_name(client)?
            .get_stub()?;
        let url = format!("https://limits.internal/take?limit={limit}");
        let response = stub.fetch_with_str(&url).await?;
        Ok::<bool, worker::Error>(response.status_code() == 200)
    };
    match asked.await {
        Ok(fits) => fits,
        Err(e) => {
            worker::console_error!("the session limiter of {client} could not be asked: {e}");
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_a_minute_then_starts_again() {
        let mut w = Window::default();
        let t0 = 1_000_000.0;
        assert!((0..3).all(|i| w.take(t0 + f64::from(i), 3)));
        assert!(!w.take(t0 + 10.0, 3), "the fourth in the minute");
        assert!(
            !w.take(t0 + 59_999.0, 3),
            "refusals are not counted, but still refused"
        );
        assert!(w.take(t0 + 60_000.0, 3), "a new minute");
        assert!(w.take(t0 + 60_001.0, 3));
        assert!(w.take(t0, 3), "a clock that went back starts a new window");
        let mut none = Window::default();
        assert!(!none.take(t0, 0), "a limit of 0 takes nothing");
    }
}

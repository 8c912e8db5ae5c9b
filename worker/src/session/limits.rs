//! The limits of one session, besides each socket's own (`RATE_LIMIT_PER_MINUTE`): sockets at
//! once, frames and runs a minute from all its sockets together, and — when it is created —
//! its client's allowance of new sessions (limiter.rs). Each refusal says which limit and its
//! setting; other sessions are untouched, since each counts only its own.

use worker::WebSocket;

use super::socket::SocketInfo;
use super::{error_event, Session};

/// The close code of a socket a limit refused: 1013, "try again later" (RFC 6455 §7.4.1).
pub(super) const CLOSE_LIMITED: u16 = 1013;

impl Session {
    /// Whether a socket may join: if this session is new, within its client's
    /// `SESSIONS_PER_MINUTE`; then under `SOCKETS_PER_SESSION`, checked last, with no await
    /// between it and the caller's accept, so that sockets connecting at once cannot all pass
    /// it. `Err` is the reason, short enough for a close frame (at most 123 bytes).
    pub(super) async fn admit(&self, client: &str) -> Result<(), String> {
        self.admit_new(client).await?;
        let max = self.settings.sockets_per_session;
        let open = self.state.get_websockets().len();
        if open >= max as usize {
            return Err(format!(
                "this session has {open} sockets, its limit (SOCKETS_PER_SESSION)"
            ));
        }
        Ok(())
    }

    async fn admit_new(&self, client: &str) -> Result<(), String> {
        let store = self.store();
        if store.meta("created").ok().flatten().is_some() {
            return Ok(());
        }
        let limit = self.settings.sessions_per_minute;
        if !crate::limiter::may_create_session(&self.env, client, limit).await {
            return Err(format!(
                "too many new sessions: at most {limit} a minute (SESSIONS_PER_MINUTE)"
            ));
        }
        let now = js_sys::Date::now().to_string();
        if let Err(e) = store.set_meta("created", &now) {
            // Not fatal: the session is asked for again as new next time, and counted again.
            worker::console_error!("session created, but not marked so: {e}");
        }
        Ok(())
    }

    /// Counts a frame against `SESSION_FRAMES_PER_MINUTE`; over it, the frame is answered with
    /// an error and dropped.
    pub(super) fn session_rate_limited(&self, ws: &WebSocket, info: &SocketInfo) -> bool {
        let limit = self.settings.session_frames_per_minute;
        let mut window = self.frames.get();
        let fits = window.take(js_sys::Date::now(), limit);
        self.frames.set(window);
        if !fits {
            let message = format!(
                "too many messages in this session: at most {limit} a minute from all its \
                 sockets (SESSION_FRAMES_PER_MINUTE); slow down"
            );
            self.reply(ws, info, error_event(&message, "rate_limited", None));
        }
        !fits
    }

    /// Counts a run against `SESSION_RUNS_PER_MINUTE`; `Err` is the refusal to send.
    pub(super) fn take_run(&self) -> Result<(), String> {
        let limit = self.settings.session_runs_per_minute;
        let mut window = self.runs.get();
        let fits = window.take(js_sys::Date::now(), limit);
        self.runs.set(window);
        if fits {
            Ok(())
        } else {
            Err(format!(
                "too many runs in this session: at most {limit} a minute \
                 (SESSION_RUNS_PER_MINUTE); try again shortly"
            ))
        }
    }
}

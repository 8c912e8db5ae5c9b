//! The limits of one session, besides each socket's own (`RATE_LIMIT_PER_MINUTE`): sockets at
//! once, frames and runs a minute from all its sockets together, and — when it is created —
//! its client's allowance of new sessions (limiter.rs). Each refusal says which limit and its
//! setting; other sessions are untouched, since each counts only its own.

use std::cell::RefCell;

use futures_util::future::{FutureExt, LocalBoxFuture, Shared};
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

    /// A new session is counted once, against the client that opened it first (see
    /// [`Creating`]).
    async fn admit_new(&self, client: &str) -> Result<(), String> {
        let limit = self.settings.sessions_per_minute;
        loop {
            let store = self.store();
            match store.meta("created") {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => {}
                // Neither counted as new (a refusal it may not deserve) nor let in uncounted:
                // the socket is closed with 1013, "try again later".
                Err(e) => {
                    self.log_unreadable("whether the session was created", &e);
                    return Err("this session's storage could not be read; try again".into());
                }
            }
            let ask = || {
                let (env, client) = (self.env.clone(), client.to_owned());
                async move { crate::limiter::may_create_session(&env, &client, limit).await }
                    .boxed_local()
            };
            match self.creating.answer(client, ask).await {
                Answer::Fits => {
                    // Not fatal where it fails: the session is asked for again as new next
                    // time, and counted again.
                    match store.meta("created") {
                        Ok(Some(_)) => {}
                        Ok(None) => {
                            let now = js_sys::Date::now().to_string();
                            if let Err(e) = store.set_meta("created", &now) {
                                worker::console_error!("session created, but not marked so: {e}");
                            }
                        }
                        Err(e) => self.log_unreadable("whether the session was marked created", &e),
                    }
                    return Ok(());
                }
                Answer::Refused => {
                    return Err(format!(
                        "too many new sessions: at most {limit} a minute (SESSIONS_PER_MINUTE)"
                    ))
                }
                // Another client was refused this session; this one asks for itself.
                Answer::RefusedAnother => {}
            }
        }
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

/// A new session's `SESSIONS_PER_MINUTE` check while it is asked. The limiter is another
/// object, so other sockets can open the same new session before it answers; they wait for
/// that answer instead of each asking again. Asked once per socket, one client's burst of
/// sockets to a new session would use that many of its allowance, and the last could be refused.
#[derive(Default)]
pub(super) struct Creating(RefCell<Option<Asked>>);

#[derive(Clone)]
struct Asked {
    client: String,
    answer: Shared<LocalBoxFuture<'static, bool>>,
}

#[derive(Debug, PartialEq)]
pub(super) enum Answer {
    Fits,
    Refused,
    /// The check in flight was another client's, and refused: it says nothing of this one's.
    RefusedAnother,
}

impl Creating {
    /// The answer for `client`: the check in flight if there is one, else the one `ask` starts.
    pub(super) async fn answer(
        &self,
        client: &str,
        ask: impl FnOnce() -> LocalBoxFuture<'static, bool>,
    ) -> Answer {
        let asked = self
            .0
            .borrow_mut()
            .get_or_insert_with(|| Asked {
                client: client.to_owned(),
                answer: ask().shared(),
            })
            .clone();
        let fits = asked.answer.clone().await;
        let mut slot = self.0.borrow_mut();
        if slot
            .as_ref()
            .is_some_and(|a| a.answer.ptr_eq(&asked.answer))
        {
            *slot = None;
        }
        match (fits, asked.client == client) {
            (true, _) => Answer::Fits,
            (false, true) => Answer::Refused,
            (false, false) => Answer::RefusedAnother,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::future::Future;
    use std::pin::pin;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};

    use futures_util::future::{join3, poll_fn};

    use super::*;

    /// A limiter whose answer is `verdict`, given once `open` is set; `asked` counts its calls.
    fn limiter(
        asked: &Rc<Cell<u32>>,
        open: &Rc<Cell<bool>>,
        verdict: bool,
    ) -> impl FnOnce() -> LocalBoxFuture<'static, bool> {
        let (asked, open) = (asked.clone(), open.clone());
        move || {
            asked.set(asked.get() + 1);
            poll_fn(move |_| {
                if open.get() {
                    Poll::Ready(verdict)
                } else {
                    Poll::Pending
                }
            })
            .boxed_local()
        }
    }

    fn poll<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn sockets_opening_a_new_session_together_ask_once_and_share_the_answer() {
        let creating = Creating::default();
        let (asked, open) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
        let mut all = pin!(join3(
            creating.answer("alice", limiter(&asked, &open, true)),
            creating.answer("alice", limiter(&asked, &open, true)),
            creating.answer("bob", limiter(&asked, &open, true)),
        ));
        assert!(poll(all.as_mut()).is_pending());
        open.set(true);
        let Poll::Ready(answers) = poll(all.as_mut()) else {
            panic!("answered once the limiter did")
        };
        assert_eq!(answers, (Answer::Fits, Answer::Fits, Answer::Fits));
        assert_eq!(asked.get(), 1, "the limiter was asked once");
        // Answered, the check is gone: a later ask is a new one.
        let later = pin!(creating.answer("alice", limiter(&asked, &open, false)));
        assert_eq!(poll(later), Poll::Ready(Answer::Refused));
        assert_eq!(asked.get(), 2);
    }

    #[test]
    fn a_refusal_is_its_own_clients_only() {
        let creating = Creating::default();
        let (asked, open) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
        let mut both = pin!(futures_util::future::join(
            creating.answer("alice", limiter(&asked, &open, false)),
            creating.answer("bob", limiter(&asked, &open, true)),
        ));
        assert!(poll(both.as_mut()).is_pending());
        open.set(true);
        assert_eq!(
            poll(both.as_mut()),
            Poll::Ready((Answer::Refused, Answer::RefusedAnother))
        );
        assert_eq!(asked.get(), 1);
    }
}

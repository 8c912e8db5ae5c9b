//! Carries an MCP [`Operation`] over `fetch`: sends what it asks for, feeds each response back
//! piece by piece as it arrives (an SSE answer's progress surfaces before its end), and stops
//! it at the caller's deadline. Only `POST`s: the optional `GET` stream is never opened (it
//! would hold the object awake for nothing weft uses).

use std::pin::Pin;
use std::time::Duration;

use futures_util::stream::{self, LocalBoxStream, SelectAll};
use futures_util::{FutureExt, StreamExt};
use weft_agent::mcp::{Action, HttpRequest, Operation, Outcome};
use worker::{Fetch, Headers};

/// HTTP requests one operation may send at most: a call takes a handful (a probe, a
/// handshake, the call, answers to the server's pings), a discovery one per page. A server
/// that keeps it going past this (pinging without end) fails it, so one tool cannot spend
/// the invocation's subrequest budget that the run's model calls need.
pub const MAX_REQUESTS: u32 = 40;

/// What happened to one request in flight.
enum Piece {
    Head(u16, Vec<(String, String)>),
    Body(Vec<u8>),
    End,
    Failed(String),
}

/// Drives `op` until it is done, or `timeout_ms` has passed (it then fails, saying so).
/// `progress` hears each progress report of a tool call, in words.
///
/// An operation given up on — past its timeout, or dropped unfinished because its run ended
/// (cancelled) — is cancelled: a 2025-era server is told to stop working on the call
/// (`notifications/cancelled`, sent on its own); closing the stream tells a current one.
pub async fn drive(
    op: &mut Operation,
    timeout_ms: u64,
    progress: impl FnMut(String),
) -> Result<Outcome, String> {
    let mut guard = CancelOnDrop { op, done: false };
    let result = drive_until_done(guard.op, timeout_ms, progress).await;
    guard.done = result.is_ok() || !result.as_ref().is_err_and(|e| e.timed_out);
    result.map_err(|e| e.message)
}

/// Why an operation failed, and whether it was the timeout (it is then cancelled).
struct Failed {
    message: String,
    timed_out: bool,
}

impl From<String> for Failed {
    fn from(message: String) -> Self {
        Failed {
            message,
            timed_out: false,
        }
    }
}

/// Cancels the operation it holds unless it finished.
struct CancelOnDrop<'a> {
    op: &'a mut Operation,
    done: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Some(request) = self.op.cancel("weft stopped waiting for the call") else {
            return;
        };
        // On its own: nothing waits for the answer, and the call's future may be gone.
        wasm_bindgen_futures::spawn_local(async move {
            let sent = match build(&request) {
                Ok(req) => Fetch::Request(req).send().await.map(|_| ()),
                Err(e) => Err(e),
            };
            if let Err(e) = sent {
                worker::console_warn!("MCP: the cancellation of a call was not sent: {e}");
            }
        });
    }
}

async fn drive_until_done(
    op: &mut Operation,
    timeout_ms: u64,
    mut progress: impl FnMut(String),
) -> Result<Outcome, Failed> {
    let mut inflight: SelectAll<LocalBoxStream<'static, (u64, Piece)>> = SelectAll::new();
    let mut sent = 0u32;
    let mut timer = Box::pin(worker::Delay::from(Duration::from_millis(timeout_ms)));
    loop {
        match op.poll() {
            Some(Action::Send(request)) => {
                sent += 1;
                if sent > MAX_REQUESTS {
                    return Err(Failed {
                        message: format!(
                            "the MCP server needed more than {MAX_REQUESTS} requests for one \
                             operation, so weft stopped it"
                        ),
                        timed_out: true,
                    });
                }
                // Answers to the server's pings are read like any response (their bodies are
                // empty): the operation takes and ignores them.
                inflight.push(exchange(request));
                continue;
            }
            Some(Action::Progress {
                progress: done,
                total,
                message,
            }) => {
                progress(progress_text(done, total, message.as_deref()));
                continue;
            }
            Some(Action::Done(result)) => return result.map_err(|e| e.to_string().into()),
            None => {}
        }
        if inflight.is_empty() {
            return Err(String::from("the MCP operation stopped without an answer").into());
        }
        let next = futures_util::future::select(inflight.next(), timer.as_mut()).await;
        match next {
            futures_util::future::Either::Left((Some((id, piece)), _)) => match piece {
                Piece::Head(status, headers) => op.on_head(id, status, &headers),
                Piece::Body(bytes) => op.on_body(id, &bytes),
                Piece::End => op.on_end(id),
                Piece::Failed(reason) => op.on_failed(id, &reason),
            },
            futures_util::future::Either::Left((None, _)) => {}
            futures_util::future::Either::Right(_) => {
                return Err(Failed {
                    message: format!(
                        "the MCP server did not answer within {timeout_ms} ms \
                         (MCP_CALL_TIMEOUT_MS), so weft stopped waiting"
                    ),
                    timed_out: true,
                });
            }
        }
    }
}

/// One request's response as a stream of pieces: the head, each read of the body, its end
/// (or why it failed).
fn exchange(request: HttpRequest) -> LocalBoxStream<'static, (u64, Piece)> {
    let id = request.id;
    let opened = async move {
        let sent = match build(&request) {
            Ok(req) => Fetch::Request(req).send().await,
            Err(e) => Err(e),
        };
        let mut response = match sent {
            Ok(response) => response,
            Err(e) => return stream::iter([(id, Piece::Failed(e.to_string()))]).boxed_local(),
        };
        let head = Piece::Head(
            response.status_code(),
            response.headers().entries().collect(),
        );
        let body: LocalBoxStream<'static, (u64, Piece)> = match response.stream() {
            Ok(body) => body
                .map(move |read| match read {
                    Ok(bytes) => (id, Piece::Body(bytes)),
                    Err(e) => (id, Piece::Failed(e.to_string())),
                })
                .chain(stream::iter([(id, Piece::End)]))
                .boxed_local(),
            // No body at all (a 202): it ends at once.
            Err(_) => stream::iter([(id, Piece::End)]).boxed_local(),
        };
        stream::iter([(id, head)]).chain(body).boxed_local()
    };
    let pieces: Pin<Box<_>> = Box::pin(opened.into_stream().flatten());
    // After a failed read nothing more of that body is read.
    let mut over = false;
    pieces
        .take_while(move |(_, piece)| {
            let go = !over;
            over = over || matches!(piece, Piece::Failed(_));
            futures_util::future::ready(go)
        })
        .boxed_local()
}

fn build(request: &HttpRequest) -> worker::Result<worker::Request> {
    let headers = Headers::new();
    for (name, value) in &request.headers {
        headers.set(name, value)?;
    }
    crate::outbound::request(
        &request.url,
        request.method,
        Some(&headers),
        request.body.as_deref(),
    )
}

/// A progress report in words: `3/5`, `40%`, `step 3`, with the server's message after.
fn progress_text(done: f64, total: Option<f64>, message: Option<&str>) -> String {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            format!("{n}")
        }
    };
    let amount = match total {
        Some(total) if total > 0.0 => format!("{}/{}", number(done), number(total)),
        _ => number(done),
    };
    match message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(message) => format!("progress {amount}: {message}"),
        None => format!("progress {amount}"),
    }
}

#[cfg(test)]
mod tests {
    use super::progress_text;

    #[test]
    fn progress_reads_as_a_fraction_with_the_servers_words() {
        assert_eq!(progress_text(3.0, Some(5.0), None), "progress 3/5");
        assert_eq!(
            progress_text(0.5, None, Some(" halfway ")),
            "progress 0.5: halfway"
        );
        assert_eq!(progress_text(2.0, Some(0.0), Some("")), "progress 2");
    }
}

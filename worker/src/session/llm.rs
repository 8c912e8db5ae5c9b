//! A model call (opened by `crate::llm`): its response streamed into the run, read by read, published in batches
//! (batch.rs), with the idle timeout, cancel and the stream's failures.

use std::task::Poll;
use std::time::Duration;

use futures_util::future::LocalBoxFuture;
use futures_util::{FutureExt, StreamExt};
use weft_agent::engine::Input;
use weft_agent::provider::ProviderError;

use super::publish::LOG_WITHIN_MS;
use super::Session;
use crate::batch::{Batching, Step, QUIET_GAP_MS};
use crate::llm::network_error;

impl Session {
    /// Streams model call `call` into the run; returns when it ends, fails, is cancelled, or
    /// the run stops taking its input — with every delta it sent logged.
    pub(super) async fn call_llm(&self, call: u64, request: weft_agent::provider::ChatRequest) {
        self.stream_llm(call, request).await;
        self.log_deltas(call);
    }

    /// Logs the deltas waiting to be (publish.rs); a run whose log cannot be written stops.
    /// False when it could not.
    fn log_deltas(&self, call: u64) -> bool {
        let Err(e) = self.write_log(&self.store()) else {
            return true;
        };
        self.handle(Input::HostFailed {
            code: "storage".into(),
            message: format!(
                "the run's events could not be stored ({e}), so it stops here: a resume \
                 could not replay them (model call {call})"
            ),
        });
        false
    }

    async fn stream_llm(&self, call: u64, request: weft_agent::provider::ChatRequest) {
        // The provider and key of the run's agent (AGENTS), looked up by the name its
        // checkpoint keeps.
        let agent = self.run.borrow().as_ref().map(|r| r.config().agent.clone());
        let model = self
            .settings
            .model_for(agent.as_deref().unwrap_or_default());
        let (mut stream, config) = match crate::llm::open(&self.env, &model, &request).await {
            Ok(opened) => opened,
            Err(err) => return self.failed(call, err),
        };
        let provider = config.provider;
        let mut decoder = config.decoder();
        // The idle timeout: one timer per call, not one per chunk (setting and clearing a
        // timer per chunk was 5 % of the isolate's time in the server benchmark's profile).
        // When it fires early it is set again for what remains since the last chunk. (The byte
        // stream keeps its pending read across the re-arm, so no bytes are lost.)
        let idle_ms = self.settings.llm_idle_timeout_ms as f64;
        let delay = |ms: f64| Box::pin(worker::Delay::from(Duration::from_millis(ms as u64)));
        let mut timer = delay(idle_ms);
        let mut last_chunk = js_sys::Date::now();
        // Which reads are published at once and which wait to go out together: see batch.rs.
        // `flush` is the timer of its flush.
        let mut batching = Batching::new(
            self.settings.stream_batch_reads,
            self.settings.stream_batch_ms as f64,
        );
        let mut flush: Option<LocalBoxFuture<'static, ()>> = None;
        // When the deltas sent and not yet logged are written at the latest (publish.rs).
        let mut log_due: Option<LocalBoxFuture<'static, ()>> = None;
        enum Wake<T> {
            Chunk(Option<T>),
            Flush,
            Log,
            Idle,
        }
        loop {
            if log_due.is_none() {
                if let Some(waited) = self.log_waited(js_sys::Date::now()) {
                    log_due = Some(delay((LOG_WITHIN_MS - waited).max(1.0)).boxed_local());
                }
            }
            let wake = futures_util::future::poll_fn(|cx| {
                if let Some(f) = flush.as_mut() {
                    if f.poll_unpin(cx).is_ready() {
                        return Poll::Ready(Wake::Flush);
                    }
                }
                if let Some(f) = log_due.as_mut() {
                    if f.poll_unpin(cx).is_ready() {
                        return Poll::Ready(Wake::Log);
                    }
                }
                if let Poll::Ready(chunk) = stream.poll_next_unpin(cx) {
                    return Poll::Ready(Wake::Chunk(chunk));
                }
                match timer.poll_unpin(cx) {
                    Poll::Ready(()) => Poll::Ready(Wake::Idle),
                    Poll::Pending => Poll::Pending,
                }
            })
            .await;
            let chunk = match wake {
                Wake::Chunk(Some(chunk)) => chunk,
                Wake::Chunk(None) => break,
                Wake::Flush => {
                    flush = None;
                    match batching.flush(js_sys::Date::now()) {
                        Step::Publish => {
                            if !self.feed_decoded(call, &mut decoder) {
                                return;
                            }
                            flush = self.published(&mut batching, js_sys::Date::now());
                        }
                        Step::Wait => flush = Some(delay(QUIET_GAP_MS).boxed_local()),
                        Step::Hold | Step::Quiet => {}
                    }
                    continue;
                }
                Wake::Log => {
                    log_due = None;
                    // Deltas that came after a write are not due yet: the timer is set again.
                    let due = self
                        .log_waited(js_sys::Date::now())
                        .is_some_and(|waited| waited >= LOG_WITHIN_MS);
                    if due && !self.log_deltas(call) {
                        return;
                    }
                    continue;
                }
                Wake::Idle => {
                    let quiet = js_sys::Date::now() - last_chunk;
                    if quiet < idle_ms {
                        timer = delay(idle_ms - quiet + 1.0);
                        continue;
                    }
                    self.feed_decoded(call, &mut decoder);
                    let secs = idle_ms / 1000.0;
                    let err =
                        network_error(provider, &format!("the model sent nothing for {secs} s"));
                    return self.failed(call, err);
                }
            };
            last_chunk = js_sys::Date::now();
            if self.cancel.replace(false) {
                self.feed_decoded(call, &mut decoder);
                self.handle(Input::Cancel);
                return;
            }
            let bytes = match chunk {
                Ok(b) => b,
                Err(e) => {
                    self.feed_decoded(call, &mut decoder);
                    let err =
                        network_error(provider, &format!("the connection broke mid-stream ({e})"));
                    return self.failed(call, err);
                }
            };
            let pushed = decoder.push(&bytes);
            if pushed.is_ok() && batching.read(last_chunk) == Step::Hold {
                continue;
            }
            if !self.feed_decoded(call, &mut decoder) {
                return;
            }
            if let Err(e) = pushed {
                return self.failed(call, e);
            }
            flush = self.published(&mut batching, last_chunk);
        }
        if self.cancel.replace(false) {
            self.feed_decoded(call, &mut decoder);
            self.handle(Input::Cancel);
            return;
        }
        match decoder.finish() {
            Ok(()) => {
                if self.feed_decoded(call, &mut decoder) {
                    self.handle(Input::LlmEnd { call });
                }
            }
            Err(e) => {
                self.feed_decoded(call, &mut decoder);
                self.failed(call, e)
            }
        }
    }

    /// A model stream's reads were published at `now`: its next flush, when batching arms one.
    fn published(&self, batching: &mut Batching, now: f64) -> Option<LocalBoxFuture<'static, ()>> {
        batching.published(now);
        batching.is_armed().then(|| self.committed())
    }

    /// A model stream's flush (batch.rs): a quiet gap after the storage's pending writes are
    /// durable (the output gate has let the last publish's frames go). The gap starts only then,
    /// because while a commit is under way the stream's next read can only wait: a gap counted
    /// from the publish would call a busy stream quiet.
    fn committed(&self) -> LocalBoxFuture<'static, ()> {
        let gap = || worker::Delay::from(Duration::from_millis(QUIET_GAP_MS as u64));
        match self.state.as_raw().storage().and_then(|s| s.sync()) {
            Ok(promise) => wasm_bindgen_futures::JsFuture::from(promise)
                .then(move |_| gap())
                .boxed_local(),
            Err(_) => gap().boxed_local(),
        }
    }

    /// Feeds the run every delta the decoder holds (merged where they continue each other) and
    /// publishes what they produced as one batch. False when the call should stop: the run
    /// refused a delta (it no longer waits for this call) or is over.
    fn feed_decoded(&self, call: u64, decoder: &mut weft_agent::provider::StreamDecoder) -> bool {
        let mut accepted = true;
        while let Some(delta) = decoder.poll_merged() {
            accepted = self.feed_run(Input::Llm { call, delta });
            if !accepted {
                break;
            }
        }
        self.drain_run();
        accepted && self.run.borrow().as_ref().is_some_and(|r| !r.is_finished())
    }

    fn failed(&self, call: u64, error: ProviderError) {
        self.handle(Input::LlmFailed { call, error });
    }
}

//! `POST /v1/chat/completions`: an OpenAI-compatible endpoint in front of whichever provider is
//! configured, so browser code written for OpenAI works unchanged while the key stays here.
//!
//! The request is read as OpenAI Chat Completions into the provider-neutral [`ChatRequest`],
//! sent with the provider's own codec, and the provider's stream is decoded to [`Delta`]s and
//! written back as OpenAI `chat.completion.chunk`s (or one `chat.completion`). Reading and
//! writing are weft-agent's ([`parse_completions_request`], [`CompletionsWriter`]); this module
//! moves the bytes.
//!
//! [`ChatRequest`]: weft_agent::provider::ChatRequest

use futures_util::StreamExt;
use serde_json::{json, Value};
use weft_agent::provider::{
    parse_completions_request, CompletionsRequest, CompletionsWriter, Delta, ProviderError,
    StreamDecoder,
};
use worker::{ByteStream, Env, Headers, Request, Response, Result};

use crate::settings::{Model, Settings};

/// Largest accepted request body.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// An OpenAI-shaped error response.
fn error(status: u16, message: &str, kind: &str) -> Result<Response> {
    let body =
        json!({ "error": { "message": message, "type": kind, "param": null, "code": null } });
    Ok(Response::from_json(&body)?.with_status(status))
}

fn provider_error_response(e: &ProviderError) -> Result<Response> {
    let status = e.status().filter(|s| (400..600).contains(s)).unwrap_or(502);
    let mut response = error(status, &e.to_string(), "provider_error")?;
    if let Some(secs) = e.retry_after_secs() {
        let headers = Headers::new();
        headers.set("retry-after", &secs.to_string())?;
        headers.set("content-type", "application/json")?;
        response = response.with_headers(headers);
    }
    Ok(response)
}

/// Serves one `POST /v1/chat/completions`.
pub async fn chat_completions(
    mut req: Request,
    env: &Env,
    settings: &Settings,
) -> Result<Response> {
    let bytes = req.bytes().await?;
    if bytes.len() > MAX_BODY {
        return error(
            413,
            "the request body is too large",
            "invalid_request_error",
        );
    }
    // Through `from_str`, as everywhere else, so the JSON reader is linked once (a `from_slice`
    // is a second copy of it).
    let parsed = core::str::from_utf8(&bytes)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()));
    let body = match parsed {
        Ok(v) => v,
        Err(e) => {
            return error(
                400,
                &format!("the request body is not valid JSON: {e}"),
                "invalid_request_error",
            )
        }
    };
    let default_model = match &settings.model {
        Model::Missing(why) => return error(503, why, "model_not_configured"),
        model => model.config().map(|c| c.model.as_str()).unwrap_or_default(),
    };
    let CompletionsRequest {
        request,
        stream,
        include_usage,
    } = match parse_completions_request(&body, default_model) {
        Ok(r) => r,
        Err(msg) => return error(400, &msg, "invalid_request_error"),
    };
    let (body, config) = match crate::llm::open(env, &settings.model, &request).await {
        Ok(opened) => opened,
        Err(e) => return provider_error_response(&e),
    };
    let id = match crate::session::uuid() {
        Ok(uuid) => uuid.replace('-', ""),
        Err(e) => return error(500, &e, "server_error"),
    };
    let writer = CompletionsWriter::new(
        format!("chatcmpl-{id}"),
        (js_sys::Date::now() / 1000.0) as u64,
        request.model.clone(),
        include_usage,
    );
    let decoder = config.decoder();
    if stream {
        let sse =
            futures_util::stream::unfold(Some((body, decoder, writer, true)), |state| async move {
                let (mut body, mut decoder, mut writer, first) = state?;
                let mut out = String::new();
                if first {
                    out.push_str(&writer.start());
                }
                loop {
                    match body.next().await {
                        Some(Ok(bytes)) => {
                            let pushed = decoder.push(&bytes);
                            while let Some(d) = decoder.poll() {
                                writer.write(d, &mut out);
                            }
                            if let Err(e) = pushed {
                                writer.write(Delta::Error(e), &mut out);
                                return Some((
                                    Ok::<Vec<u8>, worker::Error>(out.into_bytes()),
                                    None,
                                ));
                            }
                            if !out.is_empty() {
                                return Some((
                                    Ok(out.into_bytes()),
                                    Some((body, decoder, writer, false)),
                                ));
                            }
                        }
                        Some(Err(e)) => {
                            CompletionsWriter::error(
                                &format!("the model's stream broke: {e}"),
                                &mut out,
                            );
                            return Some((Ok(out.into_bytes()), None));
                        }
                        None => {
                            let finished = decoder.finish();
                            while let Some(d) = decoder.poll() {
                                writer.write(d, &mut out);
                            }
                            match finished {
                                Ok(()) => writer.end(&mut out),
                                Err(e) => writer.write(Delta::Error(e), &mut out),
                            }
                            return Some((Ok(out.into_bytes()), None));
                        }
                    }
                }
            });
        let headers = Headers::new();
        headers.set("content-type", "text/event-stream")?;
        headers.set("cache-control", "no-cache")?;
        return Ok(Response::from_stream(sse)?.with_headers(headers));
    }
    collect(body, decoder, writer).await
}

/// The non-streamed answer: the whole stream folded into one `chat.completion`.
async fn collect(
    mut body: ByteStream,
    mut decoder: StreamDecoder,
    writer: CompletionsWriter,
) -> Result<Response> {
    let mut deltas = Vec::new();
    while let Some(chunk) = body.next().await {
        let pushed = decoder.push(&chunk?);
        deltas.extend(std::iter::from_fn(|| decoder.poll()));
        if let Err(e) = pushed {
            return provider_error_response(&e);
        }
    }
    let finished = decoder.finish();
    deltas.extend(std::iter::from_fn(|| decoder.poll()));
    if let Err(e) = finished {
        return provider_error_response(&e);
    }
    match writer.completion(deltas) {
        Ok(body) => Response::from_json(&body),
        Err(e) => provider_error_response(&e),
    }
}

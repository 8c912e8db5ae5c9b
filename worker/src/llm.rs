//! Opening a model's answer: over HTTP with a key, or through the Workers AI binding
//! (`[ai] binding = "AI"`) with none. Both give a byte stream for the provider's decoder; the
//! session's model calls and the `/v1/chat/completions` proxy share this.
//!
//! `wrangler dev` cannot run the binding offline (`npm start` runs with `--local`, where it is
//! absent), so the binding's request and stream codec are tested natively in `weft-agent`, and
//! the call itself is the thin [`run_binding`].

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use weft_agent::provider::{ChatRequest, HttpRequest, Provider, ProviderConfig, ProviderError};
use worker::{ByteStream, Env, Fetch, Response};

use crate::settings::Model;

/// Sends `request` to the configured model: the body of its answer and the configuration that
/// decodes it, else why not.
pub async fn open<'a>(
    env: &Env,
    model: &'a Model,
    request: &ChatRequest,
) -> Result<(ByteStream, &'a ProviderConfig), ProviderError> {
    let (config, binding) = match model {
        Model::Api(c) | Model::Scripted(c) => (c, false),
        Model::Binding(c) => (c, true),
        Model::Missing(why) => {
            return Err(ProviderError::Stream {
                provider: Provider::OpenAi,
                status: Some(503),
                code: Some("model_not_configured".into()),
                message: why.clone(),
            })
        }
    };
    let http = config.build_request(request);
    let body = if binding {
        run_binding(env, config.model_for(request), &http.body).await
    } else {
        fetch(config.provider, &http).await
    };
    body.map(|body| (body, config))
}

/// Sends a model request over HTTP: the body of a 200 answer, else the provider's error.
async fn fetch(provider: Provider, http: &HttpRequest) -> Result<ByteStream, ProviderError> {
    let response = match crate::outbound::provider(http) {
        Ok(req) => Fetch::Request(req).send().await,
        Err(e) => Err(e),
    };
    let mut response = response
        .map_err(|e| network_error(provider, &format!("could not reach the model: {e}")))?;
    if response.status_code() != 200 {
        let status = response.status_code();
        let pairs: Vec<(String, String)> = response.headers().entries().collect();
        let body = response.text().await.unwrap_or_default();
        return Err(ProviderError::from_http(
            provider,
            status,
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            body.as_bytes(),
        ));
    }
    response
        .stream()
        .map_err(|e| network_error(provider, &format!("could not read the model's answer: {e}")))
}

/// A failure of the connection rather than an answer of the provider.
pub fn network_error(provider: Provider, message: &str) -> ProviderError {
    ProviderError::Stream {
        provider,
        status: None,
        code: Some("network".into()),
        message: message.into(),
    }
}

/// Runs `model` with the request body the Workers AI codec built (the REST API's body is the
/// binding's input), and returns the answer as an event stream for the same decoder.
///
/// A model that cannot stream answers with one whole object: it is framed as a single event
/// followed by `[DONE]`, which the codec reads like a stream.
async fn run_binding(env: &Env, model: &str, body: &str) -> Result<ByteStream, ProviderError> {
    let binding = env
        .ai("AI")
        .map_err(|e| ProviderError::from_workers_ai(&format!("the AI binding is missing: {e}")))?;
    let binding: &JsValue = binding.as_ref();
    let input =
        js_sys::JSON::parse(body).map_err(|e| ProviderError::from_workers_ai(&describe(&e)))?;
    let run = Reflect::get(binding, &JsValue::from_str("run"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| ProviderError::from_workers_ai("the AI binding has no run()"))?;
    let promise = run
        .call2(binding, &JsValue::from_str(model), &input)
        .map_err(|e| ProviderError::from_workers_ai(&describe(&e)))?;
    let output = JsFuture::from(Promise::resolve(&promise))
        .await
        .map_err(|e| binding_error(&describe(&e)))?;
    if let Ok(stream) = output.clone().dyn_into::<web_sys::ReadableStream>() {
        return Ok(ByteStream::from(stream));
    }
    // An answer that cannot be written as JSON is the binding's error, not an empty reply.
    let whole = js_sys::JSON::stringify(&output)
        .map_err(|e| binding_error(&describe(&e)))?
        .as_string()
        .ok_or_else(|| binding_error("the AI binding answered with nothing to read"))?;
    let framed = format!("data: {whole}\n\ndata: [DONE]\n\n");
    Response::from_bytes(framed.into_bytes())
        .and_then(|mut r| r.stream())
        .map_err(|e| ProviderError::from_workers_ai(&e.to_string()))
}

/// What the binding threw, as a provider error. `wrangler dev --local` puts a stand-in in the
/// binding's place that only says it must run remotely: that is a configuration to change, not
/// an outage to retry.
fn binding_error(message: &str) -> ProviderError {
    if !message.contains("run remotely") {
        return ProviderError::from_workers_ai(message);
    }
    ProviderError::Http {
        provider: Provider::WorkersAi,
        status: 400,
        code: Some("binding_not_local".into()),
        message: "the Workers AI binding runs only on Cloudflare, not under `wrangler dev \
                  --local` (npm start): set a provider key, or PROVIDER=workers-ai with \
                  WORKERS_AI_ACCOUNT_ID and WORKERS_AI_API_TOKEN for its REST API"
            .into(),
        retry_after_secs: None,
    }
}

/// The message of what the binding threw (an `Error`, or anything else).
fn describe(thrown: &JsValue) -> String {
    thrown
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| format!("{thrown:?}"))
}

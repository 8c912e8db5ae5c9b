//! Google Gemini `streamGenerateContent`: `contents` with roles `user` / `model`,
//! `functionCall` / `functionResponse` parts, and no call ids.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::anthropic::arguments_object;
use super::decoder::{parse_json, DeltaQueue};
use super::delta::FinishReason;
use super::error::ProviderError;
use super::request::{temperature_json, ChatMessage, ChatRequest, HttpRequest};
use super::{json_headers, Provider, ProviderConfig};

const PROVIDER: Provider = Provider::Gemini;

/// `POST {base}/models/{model}:streamGenerateContent?alt=sse` with `x-goog-api-key`.
///
/// Gemini has no call ids: results are matched to calls by name and order, so tool results go
/// back as `functionResponse` parts named after the tool, in the order of the calls, and the ids
/// in the history (synthetic or from another provider) are not sent. Tools are declared with
/// `parametersJsonSchema`, which takes the JSON Schema as is (the older `parameters` field
/// accepts only an OpenAPI subset and rejects e.g. `additionalProperties`).
pub(crate) fn build_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let turns = request.messages.iter().map(|message| match message {
        ChatMessage::User { content } => ("user", alloc::vec![json!({"text": content})]),
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            let mut parts = Vec::new();
            if !content.is_empty() {
                parts.push(json!({"text": content}));
            }
            for call in tool_calls {
                let mut part = Map::new();
                part.insert(
                    "functionCall".into(),
                    json!({"name": call.name, "args": arguments_object(&call.arguments)}),
                );
                if let Some(signature) = &call.signature {
                    part.insert("thoughtSignature".into(), signature.as_str().into());
                }
                parts.push(Value::Object(part));
            }
            ("model", parts)
        }
        ChatMessage::Tool(result) => {
            // Gemini's documented keys: `output` for a result, `error` for a failure.
            let key = if result.is_error { "error" } else { "output" };
            let mut response = Map::new();
            response.insert(key.into(), result.content.as_str().into());
            (
                "user",
                alloc::vec![json!({
                    "functionResponse": {"name": result.name, "response": response},
                })],
            )
        }
    });
    let contents = super::merge_turns(turns, "parts");

    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parametersJsonSchema": tool.input_schema,
                })
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut generation = Map::new();
    if let Some(max) = request.max_tokens {
        generation.insert("maxOutputTokens".into(), max.into());
    }
    if let Some(t) = request.temperature.and_then(temperature_json) {
        generation.insert("temperature".into(), t);
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }

    let mut headers = json_headers();
    if !config.api_key.is_empty() {
        headers.push(("x-goog-api-key".into(), config.api_key.clone()));
    }
    let model = config.model_for(request);
    let model = model.strip_prefix("models/").unwrap_or(model);
    HttpRequest {
        method: "POST".into(),
        url: format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            config.base(),
            encode_path_segment(model)
        ),
        headers,
        body: Value::Object(body).to_string(),
    }
}

/// Percent-encodes a model name for the URL path, so no configured name can change the path.
fn encode_path_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    candidates: Option<Vec<Candidate>>,
    usage_metadata: Option<UsageMetadata>,
    prompt_feedback: Option<PromptFeedback>,
    response_id: Option<String>,
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    index: Option<u32>,
    content: Option<Content>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    parts: Option<Vec<Part>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    text: Option<String>,
    thought: Option<bool>,
    function_call: Option<FunctionCall>,
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FunctionCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
    /// Streamed arguments (Vertex `streamFunctionCallArguments`): values addressed by JSON path.
    partial_args: Option<Vec<Map<String, Value>>>,
    will_continue: Option<bool>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    total_token_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

/// Decoder state for one Gemini stream.
///
/// Gemini has no end-of-stream event, and its `finishReason` chunk is not always the last
/// (usage can follow, and a failing stream may still append an error), so the finish reason and
/// the usage — cumulative on every chunk — are held and emitted by [`GenerateStream::on_end`],
/// unless an error ended the reply.
#[derive(Debug, Default)]
pub(crate) struct GenerateStream {
    /// The call whose arguments are still streaming (`willContinue`).
    open: Option<OpenCall>,
    finish: Option<FinishReason>,
    usage: Option<(u64, u64, Option<u64>)>,
    /// The response id, for synthesizing call ids that differ from one response to the next.
    response_id: Option<String>,
}

#[derive(Debug)]
struct OpenCall {
    index: u32,
    args: Value,
}

impl GenerateStream {
    pub(crate) fn on_event(
        &mut self,
        data: &str,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = parse_json(PROVIDER, data)?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            out.error(ProviderError::from_stream_value(PROVIDER, &error));
            return Ok(());
        }
        if self.response_id.is_none() {
            self.response_id = chunk.response_id.map(|id| {
                id.chars()
                    .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                    .collect()
            });
        }
        if let Some(usage) = chunk.usage_metadata {
            let thoughts = usage.thoughts_token_count.unwrap_or(0);
            self.usage = Some((
                usage.prompt_token_count.unwrap_or(0),
                usage
                    .candidates_token_count
                    .unwrap_or(0)
                    .saturating_add(thoughts),
                usage.total_token_count,
            ));
        }
        let candidate = chunk
            .candidates
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.index.unwrap_or(0) == 0);
        match candidate {
            Some(candidate) => {
                let parts = candidate.content.and_then(|c| c.parts).unwrap_or_default();
                for part in parts {
                    self.on_part(part, out);
                }
                if let Some(reason) = candidate.finish_reason.filter(|r| !r.is_empty()) {
                    self.close_open(out);
                    self.finish = Some(map_finish_reason(&reason));
                }
            }
            None => {
                // No candidate at all: the prompt itself was blocked.
                if chunk.prompt_feedback.and_then(|f| f.block_reason).is_some() {
                    self.finish = Some(FinishReason::ContentFilter);
                }
            }
        }
        Ok(())
    }

    fn on_part(&mut self, part: Part, out: &mut DeltaQueue) {
        if let Some(text) = &part.text {
            if part.thought == Some(true) {
                out.reasoning(text);
            } else {
                out.text(text);
            }
        }
        let Some(call) = part.function_call else {
            return;
        };
        let name = call.name.filter(|n| !n.is_empty());
        if let Some(name) = name {
            // A named part is a new call; the one before it is complete.
            self.close_open(out);
            let id =
                call.id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| match &self.response_id {
                        Some(rid) if !rid.is_empty() => format!("call_{}_{rid}", out.call_count()),
                        _ => format!("call_{}", out.call_count()),
                    });
            let index = out.start_call(id, name);
            self.open = Some(OpenCall {
                index,
                args: Value::Object(Map::new()),
            });
        }
        let Some(open) = &mut self.open else {
            // A continuation with no call to continue: nothing to attach it to.
            return;
        };
        if let Some(signature) = &part.thought_signature {
            out.call_signature(open.index, signature);
        }
        if let Some(args) = call.args {
            merge_args(&mut open.args, args);
        }
        for partial in call.partial_args.unwrap_or_default() {
            apply_partial_arg(&mut open.args, &partial);
        }
        if call.will_continue != Some(true) {
            self.close_open(out);
        }
    }

    /// A call's arguments are sent whole when it completes: Gemini streams them as values at
    /// JSON paths, not as JSON text, so they cannot be passed through piece by piece.
    fn close_open(&mut self, out: &mut DeltaQueue) {
        if let Some(open) = self.open.take() {
            let is_empty = open.args.as_object().is_some_and(Map::is_empty);
            if !is_empty {
                out.call_args(open.index, &open.args.to_string());
            }
            out.end_call(open.index);
        }
    }

    /// The body ended: report the held usage and finish reason, unless an error ended the
    /// reply. `STOP` after function calls becomes [`FinishReason::ToolCalls`], as the other
    /// providers say it.
    pub(crate) fn on_end(&mut self, out: &mut DeltaQueue) {
        if out.error_reported() {
            return;
        }
        let Some(finish) = self.finish.clone() else {
            return;
        };
        if let Some((prompt, completion, total)) = self.usage {
            out.usage(prompt, completion, total);
        }
        let finish = if finish == FinishReason::Stop && out.call_count() > 0 {
            FinishReason::ToolCalls
        } else {
            finish
        };
        out.finish(finish);
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.finish.is_some()
    }
}

fn map_finish_reason(reason: &str) -> FinishReason {
    match reason {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        other => FinishReason::Unknown(String::from(other)),
    }
}

/// `args` may come whole on the first part and again on later ones; objects merge, anything
/// else replaces.
fn merge_args(target: &mut Value, args: Value) {
    match (target, args) {
        (Value::Object(target), Value::Object(args)) => {
            for (key, value) in args {
                target.insert(key, value);
            }
        }
        (target, args) if !args.is_null() => *target = args,
        _ => {}
    }
}

/// One segment of a streamed argument's JSON path.
enum Segment {
    Key(String),
    Index(usize),
}

/// Applies one `partialArgs` entry: `{jsonPath, stringValue | numberValue | boolValue |
/// nullValue, willContinue}`. Strings arrive in pieces and are appended.
fn apply_partial_arg(root: &mut Value, partial: &Map<String, Value>) {
    let Some(path) = partial
        .get("jsonPath")
        .and_then(Value::as_str)
        .and_then(parse_path)
    else {
        return;
    };
    if !fits(root, &path) {
        return;
    }
    let Some(slot) = slot_at(root, &path) else {
        return;
    };
    if let Some(piece) = partial.get("stringValue").and_then(Value::as_str) {
        match slot {
            Value::String(existing) => existing.push_str(piece),
            other => *other = Value::String(String::from(piece)),
        }
    } else if let Some(number) = partial.get("numberValue").filter(|n| n.is_number()) {
        *slot = number.clone();
    } else if let Some(flag) = partial.get("boolValue").and_then(Value::as_bool) {
        *slot = Value::Bool(flag);
    } else if partial.contains_key("nullValue") {
        *slot = Value::Null;
    }
}

/// Parses `$.a.b[0]['c d']` into segments; `None` for anything else.
fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let (key, tail) = after.split_at(end);
            if key.is_empty() {
                return None;
            }
            segments.push(Segment::Key(String::from(key)));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix('[') {
            if let Some(quoted) = after.strip_prefix('\'').or_else(|| after.strip_prefix('"')) {
                let quote = if after.starts_with('\'') { "']" } else { "\"]" };
                let end = quoted.find(quote)?;
                let (key, tail) = quoted.split_at(end);
                segments.push(Segment::Key(String::from(key)));
                rest = tail.get(2..)?;
            } else {
                let end = after.find(']')?;
                let (digits, tail) = after.split_at(end);
                let index: usize = digits.trim().parse().ok()?;
                segments.push(Segment::Index(index));
                rest = tail.get(1..)?;
            }
        } else {
            return None;
        }
    }
    Some(segments)
}

/// Whether [`slot_at`] can reach `path` without skipping array elements, checked before it
/// changes anything. Elements stream in order, so an index may name an element or the next one,
/// never one further: paths come from the network, and `$.a[4000000000]` must not allocate four
/// billion nulls.
fn fits(root: &Value, path: &[Segment]) -> bool {
    let mut current = Some(root);
    for segment in path {
        current = match (segment, current) {
            (Segment::Key(key), Some(value)) => value.get(key.as_str()),
            (Segment::Index(index), Some(Value::Array(items))) => {
                if *index > items.len() {
                    return false;
                }
                items.get(*index)
            }
            // Created fresh below this point: only index 0 can follow.
            (Segment::Index(index), _) => {
                if *index != 0 {
                    return false;
                }
                None
            }
            (Segment::Key(_), None) => None,
        };
    }
    true
}

/// The value at `path` under `root`, created (as objects, arrays and nulls) where missing;
/// `None` for an array index past the end.
fn slot_at<'a>(root: &'a mut Value, path: &[Segment]) -> Option<&'a mut Value> {
    let mut current = root;
    for segment in path {
        current = match segment {
            Segment::Key(key) => {
                if !current.is_object() {
                    *current = Value::Object(Map::new());
                }
                current
                    .as_object_mut()?
                    .entry(key.clone())
                    .or_insert(Value::Null)
            }
            Segment::Index(index) => {
                if !current.is_array() {
                    *current = Value::Array(Vec::new());
                }
                let items = current.as_array_mut()?;
                if *index == items.len() {
                    items.push(Value::Null);
                }
                items.get_mut(*index)?
            }
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(paths: &[Value]) -> Value {
        let mut root = Value::Object(Map::new());
        for p in paths {
            apply_partial_arg(&mut root, p.as_object().unwrap());
        }
        root
    }

    #[test]
    fn streamed_arguments_rebuild_nested_json() {
        let args = apply(&[
            json!({"jsonPath": "$.query", "stringValue": "rust ", "willContinue": true}),
            json!({"jsonPath": "$.query", "stringValue": "sse"}),
            json!({"jsonPath": "$.opts.limit", "numberValue": 5}),
            json!({"jsonPath": "$.tags[0]", "stringValue": "a"}),
            json!({"jsonPath": "$.tags[1]", "stringValue": "b"}),
            json!({"jsonPath": "$['odd key']", "boolValue": true}),
            json!({"jsonPath": "$.none", "nullValue": null}),
        ]);
        assert_eq!(
            args,
            json!({"query": "rust sse", "opts": {"limit": 5}, "tags": ["a", "b"], "odd key": true, "none": null})
        );
    }

    #[test]
    fn hostile_paths_are_ignored() {
        let args = apply(&[
            json!({"jsonPath": "$.a[99999999999]", "stringValue": "x"}),
            json!({"jsonPath": "$.b[1]", "stringValue": "x"}),
            json!({"jsonPath": "no-dollar", "stringValue": "x"}),
            json!({"jsonPath": "$..", "stringValue": "x"}),
            json!({"jsonPath": "$['open", "stringValue": "x"}),
        ]);
        assert_eq!(args, json!({}));
    }
}

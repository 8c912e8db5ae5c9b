//! Context accounting and compaction: how full the model's window is, and how older turns are
//! folded into a summary that stays in the history.

use serde_json::Value;

use crate::provider::{ChatMessage, ChatRequest, ToolDef};

/// The strategy name reported in `context_info` / `context_compacted` (specs/README, agentloop).
pub const STRATEGY: &str = "ThresholdContextManager";

/// The instruction a compaction call runs under.
pub const SUMMARY_PROMPT: &str = "Summarize the conversation so far for your own later use: \
the user's goals, decisions made, facts learned, files touched and open questions. Be concise \
and complete; the summary replaces the earlier turns.";

/// Marks the history entry that holds a summary, so a later compaction folds it in again.
pub const SUMMARY_PREFIX: &str = "Summary of the earlier conversation:\n";

/// A token estimate: about four characters per token, the usual rule of thumb for English and
/// code. Deliberately simple and stable, so `context_info` does not jump between runs.
pub fn estimate_text(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Estimated tokens of everything a model call would carry: system prompt, history, tools.
pub fn estimate(system: &str, history: &[ChatMessage], tools: &[ToolDef]) -> u64 {
    let mut total = estimate_text(system);
    for m in history {
        total += 4 + match m {
            ChatMessage::User { content } => estimate_text(content),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                estimate_text(content)
                    + tool_calls
                        .iter()
                        .map(|c| estimate_text(&c.name) + estimate_text(&c.arguments))
                        .sum::<u64>()
            }
            ChatMessage::Tool(r) => estimate_text(&r.content),
        };
    }
    for t in tools {
        total += estimate_text(&t.name)
            + estimate_text(&t.description)
            + estimate_text(&serde_json::to_string(&t.input_schema).unwrap_or_default());
    }
    total
}

/// Share of the context window the turns kept verbatim after a compaction may fill: the latest
/// exchanges matter most, and the rest is what compaction frees.
pub const KEEP_SHARE: f64 = 0.25;

/// Estimated tokens of one history entry.
fn estimate_message(m: &ChatMessage) -> u64 {
    estimate("", core::slice::from_ref(m), &[])
}

/// Where the history may be cut: the index of the first message kept verbatim. The newest
/// messages are kept while they fit in `budget` tokens (the newest one always is), and a tool
/// result is never separated from the call it answers. `None` when nothing would be summarised.
pub fn cut_point(history: &[ChatMessage], budget: u64) -> Option<usize> {
    let mut cut = history.len().checked_sub(1)?;
    let mut kept = history.last().map_or(0, estimate_message);
    while cut > 0 {
        let next = estimate_message(&history[cut - 1]);
        if kept + next > budget {
            break;
        }
        kept += next;
        cut -= 1;
    }
    // Never start the kept part with tool results: move back to the assistant turn that called.
    while cut > 0 && matches!(history[cut], ChatMessage::Tool(_)) {
        cut -= 1;
    }
    (cut > 0).then_some(cut)
}

/// The model call that summarises `history[..cut]`.
pub fn summary_request(model: &str, history: &[ChatMessage], cut: usize) -> ChatRequest {
    let mut transcript = String::new();
    for m in &history[..cut] {
        match m {
            ChatMessage::User { content } => {
                transcript.push_str("User: ");
                transcript.push_str(content);
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                transcript.push_str("Assistant: ");
                transcript.push_str(content);
                for c in tool_calls {
                    transcript.push_str(&format!("\n[called {} {}]", c.name, c.arguments));
                }
            }
            ChatMessage::Tool(r) => {
                transcript.push_str(&format!("[{} returned] {}", r.name, r.content));
            }
        }
        transcript.push('\n');
    }
    ChatRequest {
        model: model.into(),
        system: Some(SUMMARY_PROMPT.into()),
        messages: vec![ChatMessage::user(format!(
            "Summarize this conversation:\n\n{transcript}"
        ))],
        tools: Vec::new(),
        max_tokens: Some(1024),
        temperature: None,
    }
}

/// The history after compaction: the summary as one user turn, then the kept turns.
pub fn apply_summary(history: &[ChatMessage], cut: usize, summary: &str) -> Vec<ChatMessage> {
    let mut out = vec![ChatMessage::user(format!("{SUMMARY_PREFIX}{summary}"))];
    out.extend_from_slice(&history[cut..]);
    out
}

/// Percent, rounded to one decimal, as the agentloop examples show it.
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    let p = part as f64 * 100.0 / whole as f64;
    (p * 10.0).round() / 10.0
}

/// Parses streamed tool arguments; an empty string means no arguments.
pub fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("arguments must be a JSON object".into()),
        Err(e) => Err(format!("arguments are not valid JSON: {e}")),
    }
}

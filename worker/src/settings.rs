//! Configuration, read from the Worker's environment (`wrangler.toml` vars, `.dev.vars` and
//! secrets locally; `npm start` writes `.dev.vars` from its own environment).

use weft_agent::engine::Config;

use crate::agents::Agents;
use wasm_bindgen::JsValue;
use weft_agent::provider::{
    workers_ai_rest_base, Provider, ProviderConfig, WORKERS_AI_DEFAULT_MODEL,
};
use weft_protocol::json::parse_f64;
use worker::Env;

/// Where a run's model comes from.
#[derive(Clone, Debug)]
pub enum Model {
    /// A provider's HTTP API, with its key: OpenAI-compatible, Responses, Anthropic, Gemini, or
    /// Workers AI's REST API.
    Api(ProviderConfig),
    /// The scripted local model `npm start` and the tests run (`SCRIPTED_LLM_URL`); it speaks
    /// OpenAI's Chat Completions.
    Scripted(ProviderConfig),
    /// The Workers AI binding (`[ai] binding = "AI"`), on a deployed Worker: no key at all.
    Binding(ProviderConfig),
    /// Nothing usable: what to set instead, said to whoever asks for a run.
    Missing(String),
}

impl Model {
    /// The codec and model a call uses; `None` when there is none.
    pub fn config(&self) -> Option<&ProviderConfig> {
        match self {
            Model::Api(c) | Model::Scripted(c) | Model::Binding(c) => Some(c),
            Model::Missing(_) => None,
        }
    }

    /// How the model is reached, for `/status`: `api`, `scripted`, `binding` or `none`.
    pub fn source(&self) -> &'static str {
        match self {
            Model::Api(_) => "api",
            Model::Scripted(_) => "scripted",
            Model::Binding(_) => "binding",
            Model::Missing(_) => "none",
        }
    }
}

/// What a run says when no model is configured.
const NO_MODEL: &str = "no model is configured for this server. Set a provider key as a \
    secret (`wrangler secret put OPENAI_API_KEY`, or ANTHROPIC_API_KEY, GEMINI_API_KEY), or \
    deploy with the Workers AI binding (`[ai] binding = \"AI\"` in wrangler.toml); locally, \
    `npm start` runs the scripted model. See the README, \"Configuration\".";

/// Everything the server reads from its environment.
#[derive(Clone)]
pub struct Settings {
    /// The model runs call (with its key), or why there is none.
    pub model: Model,
    /// The agents a run may name, with their instructions, models and limits (`SYSTEM_PROMPT`,
    /// `AGENTS`, `DEFAULT_AGENT`: agents.rs).
    pub agents: Agents,
    /// `WEFT_AUTH_TOKEN`: when set, every request must carry it.
    pub auth_token: Option<String>,
    /// `WEFT_AUTH_SECRET`: when set, per-user tokens signed with it are accepted too, each
    /// limited to its sessions (access.rs).
    pub auth_secret: Option<String>,
    /// `ALLOWED_ORIGINS`: when set, browsers from other origins are refused (close 4003).
    pub allowed_origins: Vec<String>,
    /// `PAUSE_AFTER`: tools after which a run pauses (cueso).
    pub pause_after: Vec<String>,
    /// `MAX_ITERATIONS`: LLM round trips per run (default 10).
    pub max_iterations: u32,
    /// `CONTEXT_WINDOW`: the model's window in tokens (default 128000).
    pub context_window: u64,
    /// `MAX_FRAME_BYTES`: largest accepted frame (default 1 MiB).
    pub max_frame_bytes: usize,
    /// `RATE_LIMIT_PER_MINUTE`: frames per socket per minute (default 600).
    pub rate_limit_per_minute: u32,
    /// `SOCKETS_PER_SESSION`: sockets (clients and links) one session holds at once (default
    /// 32); one more is closed with 1013.
    pub sockets_per_session: u32,
    /// `SESSION_FRAMES_PER_MINUTE`: frames per session per minute, all its sockets together
    /// (default 3000), so more sockets do not multiply the per-socket limit.
    pub session_frames_per_minute: u32,
    /// `SESSION_RUNS_PER_MINUTE`: runs a session starts per minute (default 60).
    pub session_runs_per_minute: u32,
    /// `SESSIONS_PER_MINUTE`: new sessions one client (a per-user token's `sub`, else its IP
    /// address) may create per minute (default 600).
    pub sessions_per_minute: u32,
    /// `LLM_IDLE_TIMEOUT_MS`: a model stream silent this long fails the run (default 60000).
    pub llm_idle_timeout_ms: u64,
    /// `STREAM_BATCH_READS`: while a model streams faster than the isolate publishes, the
    /// reads of its body published together at most (default 64; 1: each read as it comes).
    pub stream_batch_reads: u32,
    /// `STREAM_BATCH_MS`: the longest a read of a fast model stream is held for its batch
    /// (default 250).
    pub stream_batch_ms: u64,
    /// `APPROVAL_TIMEOUT_MS`: an approval nobody answers is refused after this long (default
    /// 10 minutes), so no run waits forever on a client that is gone.
    pub approval_timeout_ms: u64,
    /// `EVENT_RETENTION_HOURS`: how long a finished run's event log is kept for resume
    /// (default 24 h; fractions allowed). Messages, files and approvals are kept.
    pub event_retention_ms: u64,
    /// `SESSION_TTL_DAYS`: a session unused this long is deleted whole (default: never).
    pub session_ttl_ms: Option<u64>,
    /// `WEFT_STORAGE_STATS=1`: every finished run logs the rows its session has written and
    /// the database's size (the storage benchmark reads them).
    pub storage_stats: bool,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // ProviderConfig's own Debug masks the key; the auth token is masked here.
        f.debug_struct("Settings")
            .field("model", &self.model)
            .field("auth_token", &self.auth_token.as_ref().map(|_| "***"))
            .field("auth_secret", &self.auth_secret.as_ref().map(|_| "***"))
            .field("allowed_origins", &self.allowed_origins)
            .finish_non_exhaustive()
    }
}

pub(crate) fn var(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .map(|s| s.to_string())
        .or_else(|_| env.var(name).map(|v| v.to_string()))
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn list(env: &Env, name: &str) -> Vec<String> {
    var(env, name)
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

fn number<T: std::str::FromStr>(env: &Env, name: &str, default: T) -> T {
    var(env, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// [`number`] for an `f64`, read as `str::parse` reads it (`1.5`, `.5`, `1e3`, `inf`) by the
/// protocol's parser: core's would link its tables for two settings.
fn float(env: &Env, name: &str, default: f64) -> f64 {
    var(env, name)
        .and_then(|v| parse_f64(&v))
        .unwrap_or(default)
}

impl Settings {
    pub fn from_env(env: &Env) -> Settings {
        let model = choose_model(env);
        Settings {
            agents: read_agents(env, &model),
            model,
            auth_token: var(env, "WEFT_AUTH_TOKEN"),
            auth_secret: var(env, "WEFT_AUTH_SECRET"),
            allowed_origins: list(env, "ALLOWED_ORIGINS"),
            pause_after: list(env, "PAUSE_AFTER"),
            max_iterations: number(env, "MAX_ITERATIONS", 10),
            context_window: number(env, "CONTEXT_WINDOW", 128_000),
            max_frame_bytes: number(env, "MAX_FRAME_BYTES", 1024 * 1024),
            rate_limit_per_minute: number(env, "RATE_LIMIT_PER_MINUTE", 600),
            sockets_per_session: number(env, "SOCKETS_PER_SESSION", 32),
            session_frames_per_minute: number(env, "SESSION_FRAMES_PER_MINUTE", 3000),
            session_runs_per_minute: number(env, "SESSION_RUNS_PER_MINUTE", 60),
            sessions_per_minute: number(env, "SESSIONS_PER_MINUTE", 600),
            approval_timeout_ms: number(env, "APPROVAL_TIMEOUT_MS", 600_000),
            llm_idle_timeout_ms: number(env, "LLM_IDLE_TIMEOUT_MS", 60_000),
            stream_batch_reads: number(env, "STREAM_BATCH_READS", 64),
            stream_batch_ms: number(env, "STREAM_BATCH_MS", 250),
            event_retention_ms: (float(env, "EVENT_RETENTION_HOURS", 24.0).max(0.0) * 3_600_000.0)
                as u64,
            session_ttl_ms: Some(float(env, "SESSION_TTL_DAYS", 0.0))
                .filter(|days| *days > 0.0)
                .map(|days| (days * 86_400_000.0) as u64),
            storage_stats: var(env, "WEFT_STORAGE_STATS").is_some_and(|v| v == "1"),
        }
    }

    /// The config of a run that names no agent, and of what belongs to no run (the context
    /// estimate, a manual compaction): the default agent's.
    pub fn engine_config(&self) -> Config {
        let base = self.base_config();
        match self.agents.find(self.agents.default_name()) {
            Some(agent) => agent.config(base, self.agents.system_prompt(), None),
            None => base,
        }
    }

    /// What every run shares, before its agent's own settings.
    pub fn base_config(&self) -> Config {
        Config {
            model: self
                .model
                .config()
                .map(|c| c.model.clone())
                .unwrap_or_default(),
            max_iterations: self.max_iterations,
            context_window: self.context_window,
            pause_after: self.pause_after.clone(),
            ..Config::default()
        }
    }
}

/// `SYSTEM_PROMPT`, `AGENTS` and `DEFAULT_AGENT`, each agent's provider with its key.
fn read_agents(env: &Env, model: &Model) -> Agents {
    // `AGENTS` may be a table of `[vars]` in wrangler.toml, which reaches the Worker as an
    // object, not text: read as its JSON rather than taken for unset.
    let get = |name: &str| {
        var(env, name).or_else(|| (name == "AGENTS").then(|| object_json(env, name)).flatten())
    };
    let binding = env.ai("AI").is_ok();
    Agents::read(&get, model, &|provider, model| {
        provider_model(&get, binding, provider, model)
    })
}

/// The JSON text of the object a `[vars]` table put in `env` under `name`; `None` when there is
/// no object there. Written by the runtime's `JSON.stringify`, not read into serde's `Value`
/// first: the same text, without linking a JavaScript-to-serde reader of any JSON into the
/// upload. A table that cannot be written as JSON (none from wrangler.toml can) comes back as
/// a JSON string saying so, which `AGENTS`' reader refuses as not an object.
fn object_json(env: &Env, name: &str) -> Option<String> {
    let value = match js_sys::Reflect::get(env, &JsValue::from_str(name)) {
        Ok(value) => value,
        Err(_) => return Some(format!("\"{name} could not be read from the environment\"")),
    };
    if !value.is_object() {
        return None;
    }
    Some(match js_sys::JSON::stringify(&value) {
        Ok(text) => String::from(text),
        Err(_) => format!("\"{name} is an object that cannot be written as JSON\""),
    })
}

/// The model an agent names with its provider (`AGENTS`), through that provider's key: unlike
/// the server's own model, never the scripted one, so a key left unset is an error to see.
pub(crate) fn provider_model(
    get: &dyn Fn(&str) -> Option<String>,
    binding: bool,
    provider: Provider,
    model: Option<String>,
) -> Model {
    let model = model.unwrap_or_else(|| default_model(provider).into());
    let key = match provider {
        Provider::WorkersAi => {
            if let (Some(account), Some(token)) =
                (get("WORKERS_AI_ACCOUNT_ID"), get("WORKERS_AI_API_TOKEN"))
            {
                let config = ProviderConfig::new(Provider::WorkersAi, token, model)
                    .with_base_url(workers_ai_rest_base(&account));
                return Model::Api(config);
            }
            if binding {
                return Model::Binding(ProviderConfig::new(Provider::WorkersAi, "", model));
            }
            return Model::Missing(
                "provider workers-ai needs the Workers AI binding (`[ai] binding = \"AI\"`, on \
                 a deployed Worker) or WORKERS_AI_ACCOUNT_ID and WORKERS_AI_API_TOKEN"
                    .into(),
            );
        }
        Provider::Anthropic => "ANTHROPIC_API_KEY",
        Provider::Gemini => "GEMINI_API_KEY",
        Provider::OpenAi | Provider::OpenAiResponses => "OPENAI_API_KEY",
    };
    let Some(secret) = get(key) else {
        return Model::Missing(format!(
            "provider {provider} needs {key}, which is not set: `wrangler secret put {key}` \
             (or {key}= in worker/.dev.vars)"
        ));
    };
    let mut config = ProviderConfig::new(provider, secret, model);
    if key == "OPENAI_API_KEY" {
        if let Some(base) = get("OPENAI_BASE_URL") {
            config = config.with_base_url(base);
        }
    }
    Model::Api(config)
}

/// A provider's model when `MODEL` (or an agent's `model`) names none.
fn default_model(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi | Provider::OpenAiResponses => "gpt-4o-mini",
        Provider::Anthropic => "claude-haiku-4-5",
        Provider::Gemini => "gemini-2.5-flash",
        Provider::WorkersAi => WORKERS_AI_DEFAULT_MODEL,
    }
}

/// The model, in this order: `PROVIDER` if set (it must then be usable), else the first provider
/// key set, else the scripted model if `SCRIPTED_LLM_URL` is given (only `npm start` and the
/// tests give it), else the Workers AI binding if the Worker has one, else none.
fn choose_model(env: &Env) -> Model {
    let model = var(env, "MODEL");
    let choice = match var(env, "PROVIDER") {
        None => None,
        Some(name) => match Provider::from_name(&name) {
            Some(p) => Some(p),
            None => {
                let known: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
                return Model::Missing(format!(
                    "PROVIDER={name} is not a provider weft speaks: use one of {}",
                    known.join(", ")
                ));
            }
        },
    };
    let binding = env.ai("AI").is_ok();
    if choice == Some(Provider::WorkersAi) {
        // The same rules as an agent that names the provider: the REST API, else the binding.
        return provider_model(&|name| var(env, name), binding, Provider::WorkersAi, model);
    }
    let keys = [
        (Provider::OpenAi, var(env, "OPENAI_API_KEY")),
        (Provider::Anthropic, var(env, "ANTHROPIC_API_KEY")),
        (Provider::Gemini, var(env, "GEMINI_API_KEY")),
    ];
    let configured = keys.into_iter().find_map(|(p, key)| {
        let wanted = choice
            .is_none_or(|c| c == p || (c == Provider::OpenAiResponses && p == Provider::OpenAi));
        key.filter(|_| wanted).map(|key| (p, key))
    });
    if let Some((p, key)) = configured {
        let model = model.unwrap_or_else(|| default_model(p).into());
        let p = choice.unwrap_or(p);
        let mut config = ProviderConfig::new(p, key, model);
        if matches!(p, Provider::OpenAi | Provider::OpenAiResponses) {
            if let Some(base) = var(env, "OPENAI_BASE_URL") {
                config = config.with_base_url(base);
            }
        }
        return Model::Api(config);
    }
    if let Some(url) = var(env, "SCRIPTED_LLM_URL") {
        let config = ProviderConfig::new(
            Provider::OpenAi,
            "scripted",
            model.unwrap_or_else(|| "scripted".into()),
        )
        .with_base_url(url);
        return Model::Scripted(config);
    }
    if binding && choice.is_none() {
        let model = model.unwrap_or_else(|| WORKERS_AI_DEFAULT_MODEL.into());
        return Model::Binding(ProviderConfig::new(Provider::WorkersAi, "", model));
    }
    match choice {
        Some(p) => {
            let key = match p {
                Provider::Anthropic => "ANTHROPIC_API_KEY",
                Provider::Gemini => "GEMINI_API_KEY",
                _ => "OPENAI_API_KEY",
            };
            Model::Missing(format!(
                "PROVIDER={p} is set but {key} is not: `wrangler secret put {key}` (or {key}= \
                 in worker/.dev.vars)"
            ))
        }
        None => Model::Missing(NO_MODEL.into()),
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::json::parse_f64;

    /// What `float` reads is any trimmed, non-empty text a user put in a setting: every string
    /// of up to five characters drawn from what numbers and their near misses are made of, and
    /// the odd longer one, read as `str::parse::<f64>` read them.
    #[test]
    fn float_settings_read_as_str_parse_read_them() {
        let alphabet = ["0", "1", "5", ".", "e", "+", "-", "i", "N", "a", "_", " "];
        let mut texts = vec![String::new()];
        let mut from = 0;
        for _ in 0..5 {
            let to = texts.len();
            for i in from..to {
                for piece in alphabet {
                    let text = format!("{}{piece}", texts[i]);
                    texts.push(text);
                }
            }
            from = to;
        }
        texts.extend(
            [
                "24", "0.5", "1e3", "inf", "Infinity", "-inf", "NaN", "1e400", "1,5", "7 days",
            ]
            .map(String::from),
        );
        for text in &texts {
            let core = text.parse::<f64>().ok().map(f64::to_bits);
            assert_eq!(parse_f64(text).map(f64::to_bits), core, "{text:?}");
        }
    }
}

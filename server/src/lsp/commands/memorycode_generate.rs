//! `pivot.memorycode.generate`: the core's MemoryCode model-output generation for the open
//! conversation (one dialogue), with `$/progress`; the answer names the output file, which
//! `pivot.outputs.check` then scores.

use super::progress::Progress;
use super::{Args, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::Session;
use pivot_bench::memorycode::generate::{
    generate, load_topics, model_dir_name, GenDialogue, GenerateOptions, Mode, DEFAULT_RERANK_MODEL,
};
use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_llm::{Cache, Client, ClientConfig, Sampling};
use pivot_workspace::replies::Generated;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::ProgressToken;

/// `pivot.memorycode.generate`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GenerateArgs {
    model: Text,
    out: Text,
    /// An OpenAI-compatible endpoint, or else:
    base_url: Option<Text>,
    /// a script for the bundled loopback model.
    loopback: Option<Text>,
    /// Mode names; all three when absent.
    modes: Option<Vec<Text>>,
    topics: Option<Text>,
    api_key_env: Option<Text>,
    reranker_url: Option<Text>,
    temperature: Option<f64>,
}

fn modes(args: &Args<'_>, given: Option<Vec<Text>>) -> Result<Vec<Mode>> {
    let Some(list) = given else {
        return Ok(vec![Mode::Instruction, Mode::Session, Mode::History]);
    };
    list.iter()
        .map(|m| m.parse::<Mode>().map_err(|e| args.error(&e)))
        .collect()
}

struct Request {
    dialogue: PathBuf,
    topics: PathBuf,
    out: PathBuf,
    model: String,
    base_url: Option<String>,
    loopback: Option<PathBuf>,
    api_key_env: String,
    reranker_url: Option<String>,
    modes: Vec<Mode>,
    temperature: Option<f64>,
}

pub async fn generate_for_conversation(
    b: &Session,
    args: &Args<'_>,
    a: GenerateArgs,
    token: Option<ProgressToken>,
) -> Result<Generated> {
    let req = {
        let ws = b.ws_read();
        let dialogue = ws
            .replay
            .conversation()
            .map(|c| c.path.clone())
            .ok_or_else(|| {
                args.error("no MemoryCode conversation is open; open its dialogue with pivot.conversation.open first")
            })?;
        let dataset = dialogue.parent().map(PathBuf::from).unwrap_or_default();
        let topics = match &a.topics {
            Some(t) => ws.resolve(t),
            None => dataset.parent().unwrap_or(&dataset).join("topics.json"),
        };
        let base_url = a.base_url.map(|t| t.0);
        let loopback = a.loopback.map(|p| ws.resolve(&p));
        if base_url.is_none() && loopback.is_none() {
            return Err(args.error("give `baseUrl` (an OpenAI-compatible endpoint) or `loopback` (a script for the bundled loopback model)"));
        }
        Request {
            dialogue,
            topics,
            out: ws.resolve(&a.out),
            model: a.model.0,
            base_url,
            loopback,
            api_key_env: a.api_key_env.map_or("OPENAI_API_KEY".into(), |t| t.0),
            reranker_url: a.reranker_url.map(|t| t.0),
            modes: modes(args, a.modes)?,
            temperature: a.temperature,
        }
    };
    let name = req
        .dialogue
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let progress = Progress::begin(
        b,
        token,
        "memorycode-generate",
        "MemoryCode generation",
        format!("{} for {name}", req.model),
    )
    .await;
    let result = tokio::task::spawn_blocking(move || run(req))
        .await
        .map_err(|e| request_failed(format!("generation failed: {e}")));
    let end = match &result {
        Ok(Ok(g)) => format!("{} requests, {} from the cache", g.requests, g.cached),
        _ => "failed".to_string(),
    };
    progress.end(end).await;
    result?.map_err(|e| request_failed(format!("{e:#}")))
}

fn run(req: Request) -> anyhow::Result<Generated> {
    let dialogue = GenDialogue::load(&req.dialogue)?;
    let topics = if req.modes.contains(&Mode::Instruction) {
        Some(load_topics(&req.topics)?)
    } else {
        None
    };
    let server = match &req.loopback {
        Some(s) => {
            let server = LoopbackServer::start(Script::load(s)?)?;
            server.set_recording(false);
            Some(server)
        }
        None => None,
    };
    let base = match &server {
        Some(s) => s.base_url(),
        None => req.base_url.clone().unwrap_or_default(),
    };
    let mut cfg = ClientConfig::new(base.clone(), req.model.clone());
    cfg.api_key = std::env::var(&req.api_key_env)
        .ok()
        .filter(|k| !k.is_empty());
    cfg.cache = Some(Cache::new(req.out.join(".cache")));
    let client = Client::new(cfg.clone())?;
    let reranker = match (&req.reranker_url, &server) {
        (Some(u), _) => Some(u.clone()),
        (None, Some(_)) => Some(base),
        (None, None) => None,
    }
    .map(|url| {
        let mut c = cfg.clone();
        c.base_url = url;
        c.model = DEFAULT_RERANK_MODEL.to_string();
        Client::new(c)
    })
    .transpose()?;
    let model_name = model_dir_name(&req.model).to_string();
    let opts = GenerateOptions {
        out: req.out.clone(),
        model_name: model_name.clone(),
        modes: req.modes.clone(),
        sampling: Sampling {
            temperature: req.temperature,
            top_p: None,
        },
        workers: 4,
    };
    let report = generate(
        &client,
        reranker.as_ref(),
        topics.as_deref(),
        std::slice::from_ref(&dialogue),
        &opts,
        &|_, _| {},
    )?;
    let output = req
        .out
        .join(&model_name)
        .join(format!("output_{}.json", dialogue.id));
    Ok(Generated {
        output,
        requests: report.requests,
        cached: report.cached,
        written: report.written,
        failures: report.failures,
    })
}

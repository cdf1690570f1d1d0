//! The model endpoint's flags of `memorycode generate|converse` and `pivots import --model`:
//! one struct, so that the two ask the same endpoint the same way.

use std::path::PathBuf;

/// Endpoint and client settings shared by `memorycode generate`, `memorycode converse` and
/// `pivots import`.
#[derive(clap::Args, Debug)]
pub struct EndpointArgs {
    /// OpenAI-compatible base URL including `/v1`.
    #[arg(long, env = "OPENAI_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// Environment variable holding the API key.
    #[arg(long, default_value = "OPENAI_API_KEY", value_name = "NAME")]
    pub api_key_env: String,
    /// Answer from the bundled loopback model scripted by this file instead of an endpoint
    /// (examples and tests; no key needed).
    #[arg(long, value_name = "SCRIPT", conflicts_with = "base_url")]
    pub loopback: Option<PathBuf>,
    #[command(flatten)]
    pub requests: crate::cli::shared::request_args::RequestArgs,
}

//! skillwatch-lsp: the language server behind `skillwatch lsp`.
//!
//! Everything `skillwatch check` knows appears as the author types: diagnostics on SKILL.md and
//! eval files (core's checks, run on the editor's text), hovers and completions for frontmatter
//! keys and eval fields, quick fixes from the rules' fixes, and code lenses with the lift history.
//!
//! Layout (after taplo-lsp): [`state`] is the shared world, [`documents`] the document store,
//! `handlers/` one module per request family, [`ext`] the `skillwatch/*` messages, [`wire`] the
//! framing guard that keeps one malformed message from ending the session.
//!
//! Entry points: [`serve_stdio`] (what `skillwatch lsp` runs) and [`serve`] (any byte streams).

pub mod check_threads;
pub mod choice;
pub mod daemon;
pub mod documents;
pub mod ext;
pub mod handlers;
pub mod history;
pub mod locate;
pub mod memory;
pub mod settings;
pub mod state;
pub mod wire;

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::handlers::{code_action, code_lens, commands, completion, documents as docs, hover};
use crate::settings::Settings;
use crate::state::{ClientSupport, State};

/// How a session ended, for the process's exit code: the LSP specification asks for 0 after
/// `shutdown` + `exit` and 1 when the client went away without `shutdown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `shutdown` was requested before the end.
    Clean,
    /// The input ended (or `exit` came) without `shutdown`.
    Abrupt,
}

/// The language server: a thin adapter from tower-lsp-server's trait to the handlers.
#[derive(Debug)]
pub struct Backend {
    state: Arc<State>,
}

impl Backend {
    fn new(client: Client) -> Self {
        Backend {
            state: Arc::new(State::new(client)),
        }
    }

    async fn apply_settings(&self, value: &Value) {
        match Settings::from_json(value) {
            Ok(settings) => {
                self.state.set_settings(settings);
                docs::recheck_all(&self.state);
                handlers::refresh_lenses(&self.state).await;
            }
            Err(e) => {
                tracing::warn!("{e}");
                self.state
                    .client
                    .show_message(MessageType::WARNING, e.to_string())
                    .await;
            }
        }
    }

    async fn history_changed(&self) {
        handlers::refresh_lenses(&self.state).await;
    }
}

/// Ask the client to report changes of any skillwatch.toml, whose `[check]` table the
/// diagnostics of open documents depend on. Without the watcher a change applies at the
/// document's next edit.
async fn watch_config_files(client: &Client) {
    let options = DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![FileSystemWatcher {
            glob_pattern: GlobPattern::String(format!("**/{}", skillwatch_core::config::FILE_NAME)),
            kind: None,
        }],
    };
    let registration = Registration {
        id: "skillwatch-config".into(),
        method: "workspace/didChangeWatchedFiles".into(),
        register_options: serde_json::to_value(options).ok(),
    };
    if let Err(e) = client.register_capability(vec![registration]).await {
        tracing::warn!("watching skillwatch.toml files was refused: {e}");
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![":".into(), "\"".into(), " ".into()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::from(code_action::FIX_ALL),
                CodeActionKind::from(handlers::optimize::KIND),
            ]),
            ..CodeActionOptions::default()
        })),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

impl LanguageServer for Backend {
    #[tracing::instrument(skip_all)]
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        self.state
            .set_support(ClientSupport::from_capabilities(&params.capabilities));
        if let Some(options) = &params.initialization_options {
            match Settings::from_json(options) {
                Ok(settings) => self.state.set_settings(settings),
                Err(e) => tracing::warn!("initializationOptions: {e}"),
            }
        }
        self.state.set_workspace_roots(workspace_roots(&params));
        let poller = tokio::spawn(handlers::poll_history(self.state.clone()));
        self.state.add_background(poller.abort_handle());
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "skillwatch".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if self.state.support().watched_files {
            // In the background: a client that never answers must not hold up the session,
            // and the task ends with it.
            let client = self.state.client.clone();
            let registering = tokio::spawn(async move { watch_config_files(&client).await });
            self.state.add_background(registering.abort_handle());
        }
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        // The only watcher is on skillwatch.toml: its [check] table may have changed.
        docs::recheck_all(&self.state);
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.mark_shutdown();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        docs::did_open(&self.state, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        docs::did_change(&self.state, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        docs::did_close(&self.state, params);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        docs::did_save(&self.state, params);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.apply_settings(&params.settings).await;
    }

    #[tracing::instrument(skip_all)]
    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let Some(doc) = self.state.document(&at.text_document.uri) else {
            return Ok(None);
        };
        let settings = self.state.settings();
        let found = tokio::task::spawn_blocking(move || {
            let options = settings.options_for(doc.config_dir()).0;
            hover::hover(&doc, at.position, options.profile, options.vet)
        })
        .await;
        Ok(found.ok().flatten())
    }

    #[tracing::instrument(skip_all)]
    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        let Some(doc) = self.state.document(&at.text_document.uri) else {
            return Ok(None);
        };
        let settings = self.state.settings();
        let items = tokio::task::spawn_blocking(move || {
            let profile = settings.options_for(doc.config_dir()).0.profile;
            completion::complete(&doc, at.position, profile)
        })
        .await
        .unwrap_or_default();
        Ok((!items.is_empty()).then_some(CompletionResponse::Array(items)))
    }

    #[tracing::instrument(skip_all)]
    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let Some(doc) = self.state.document(&params.text_document.uri) else {
            return Ok(None);
        };
        let settings = self.state.settings();
        // a code action runs the checks that propose fixes: on the check threads, as diagnostics
        let actions = check_threads::run(move || {
            let (options, _) = settings.options_for(doc.config_dir());
            let only = params.context.only.as_deref();
            code_action::code_actions(&doc, params.range, only, &options)
        })
        .await
        .unwrap_or_default();
        Ok(Some(actions))
    }

    #[tracing::instrument(skip_all)]
    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        if !self.state.settings().code_lens {
            return Ok(None);
        }
        let Some(doc) = self.state.document(&params.text_document.uri) else {
            return Ok(None);
        };
        let history = self.state.history();
        let lenses = tokio::task::spawn_blocking(move || {
            code_lens::code_lenses(&doc, &history, SystemTime::now())
        })
        .await
        .unwrap_or_default();
        Ok(Some(lenses))
    }

    #[tracing::instrument(skip_all, fields(command = params.command))]
    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        commands::execute(self.state.clone(), &params.command, params.arguments).await
    }
}

/// The editor's workspace folders (or its root), as local paths.
#[allow(deprecated)] // root_uri: still what single-folder clients send
fn workspace_roots(params: &InitializeParams) -> Vec<std::path::PathBuf> {
    let mut uris: Vec<&Uri> = params
        .workspace_folders
        .iter()
        .flatten()
        .map(|f| &f.uri)
        .collect();
    if uris.is_empty() {
        uris.extend(params.root_uri.as_ref());
    }
    uris.into_iter()
        .filter_map(|u| u.to_file_path().map(|p| p.into_owned()))
        .collect()
}

/// Serve one LSP session over `input` / `output` until the client sends `exit` or goes away.
pub async fn serve<I, O>(input: I, output: O) -> Ending
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = LspService::build(Backend::new)
        .custom_method(ext::HISTORY_CHANGED, Backend::history_changed)
        .finish();
    let state = service.inner().state.clone();
    // editor -> guard -> server and server -> pump -> editor, through in-memory pipes
    let (guard_to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, server_to_pump) = tokio::io::duplex(1 << 20);
    let (replies_tx, replies_rx) = tokio::sync::mpsc::channel(16);
    let shutdown = Arc::new(wire::ShutdownReply::default());
    let input_task = {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            wire::pump_input(input, guard_to_server, replies_tx, &shutdown).await
        })
    };
    let output_task = tokio::spawn(async move {
        wire::pump_output(server_to_pump, output, replies_rx, &shutdown).await
    });
    Server::new(server_in, server_out, socket)
        .serve(service)
        .await;
    input_task.abort();
    state.stop_background();
    state.documents().clear(); // ends the diagnostics workers
    let _ = output_task.await;
    if state.shutdown_requested() {
        Ending::Clean
    } else {
        Ending::Abrupt
    }
}

/// Serve one session on this process's stdin and stdout.
pub async fn serve_stdio() -> Ending {
    serve(tokio::io::stdin(), tokio::io::stdout()).await
}

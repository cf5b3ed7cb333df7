//! textDocument/didOpen, didChange, didClose, didSave: keep the document store in step with the
//! editor.
//!
//! These handlers do all their work before their first `.await` (they have none), so the order
//! in which the server starts them, which is the order the editor sent them, is the order edits
//! are applied in, even though tower-lsp-server runs handlers concurrently.

use std::sync::Arc;

use tokio::sync::watch;
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, MessageType,
};

use crate::documents::{Document, DocumentKind};
use crate::handlers::{diagnostics, regressions};
use crate::state::{OpenDocument, State};

/// Track a newly opened skill file and start checking it.
#[tracing::instrument(skip_all, fields(uri = params.text_document.uri.as_str()))]
pub fn did_open(state: &Arc<State>, params: DidOpenTextDocumentParams) {
    let item = params.text_document;
    let Some(path) = item.uri.to_file_path().map(|p| p.into_owned()) else {
        tracing::debug!("not a file URI; ignored");
        return;
    };
    let Some(kind) = DocumentKind::of_path(&path) else {
        tracing::debug!("not a skill file; ignored");
        return;
    };
    let doc = Arc::new(Document::new(
        item.uri.clone(),
        path,
        kind,
        item.version,
        item.text,
    ));
    let skill_md = (doc.kind == DocumentKind::SkillMd)
        .then(|| doc.skill_dir())
        .flatten();
    let (changes, receiver) = watch::channel(doc.clone());
    state
        .documents()
        .insert(item.uri, OpenDocument { doc, changes });
    diagnostics::spawn_worker(state.clone(), receiver);
    crate::daemon::skill_opened(state);
    if let Some(dir) = skill_md {
        // regression warnings come from the history: fetched off the typing path
        let state = state.clone();
        tokio::spawn(async move { regressions::refresh(&state, dir).await });
    }
}

/// Apply incremental (or full) changes and wake the document's diagnostics worker.
#[tracing::instrument(skip_all, fields(uri = params.text_document.uri.as_str()))]
pub fn did_change(state: &State, params: DidChangeTextDocumentParams) {
    let mut documents = state.documents();
    let Some(open) = documents.get_mut(&params.text_document.uri) else {
        return;
    };
    if params.text_document.version <= open.doc.version {
        tracing::warn!(
            version = params.text_document.version,
            current = open.doc.version,
            "stale change ignored"
        );
        return;
    }
    match open
        .doc
        .with_changes(params.text_document.version, params.content_changes)
    {
        Ok(doc) => {
            open.doc = Arc::new(doc);
            open.changes.send_replace(open.doc.clone());
        }
        Err(e) => {
            // None of the batch applies: the text stays the editor's as of the last version
            // both agree on, and the author is told, rather than checked text that silently
            // differs from the buffer.
            let uri = params.text_document.uri.clone();
            drop(documents);
            tracing::error!(
                uri = uri.as_str(),
                "change refused, none of it applied: {e}"
            );
            let client = state.client.clone();
            let message = format!(
                "skillwatch refused an edit of {} ({e}); its diagnostics follow the text before \
                 that edit until the file is closed and opened again",
                uri.as_str()
            );
            tokio::spawn(async move { client.show_message(MessageType::ERROR, message).await });
        }
    }
}

/// A saved document: check it again (files it refers to may have been saved with it) and
/// refresh the skill's regression warnings; the daemon's watcher sees the save on disk.
#[tracing::instrument(skip_all, fields(uri = params.text_document.uri.as_str()))]
pub fn did_save(state: &Arc<State>, params: DidSaveTextDocumentParams) {
    let Some(doc) = state.document(&params.text_document.uri) else {
        return;
    };
    let Some(dir) = doc.skill_dir() else {
        return;
    };
    state.recheck_skill(&dir);
    let state = state.clone();
    tokio::spawn(async move { regressions::refresh(&state, dir).await });
}

/// Forget a closed document (its worker clears its diagnostics and ends) and, with the last
/// document of its skill, the skill's comparisons; memory goes back to the system soon after.
#[tracing::instrument(skip_all, fields(uri = params.text_document.uri.as_str()))]
pub fn did_close(state: &State, params: DidCloseTextDocumentParams) {
    let mut documents = state.documents();
    let closed = documents.remove(&params.text_document.uri);
    let skill_dir = closed.and_then(|open| open.doc.skill_dir());
    let last_of_skill = skill_dir.filter(|dir| {
        !documents
            .values()
            .any(|open| open.doc.skill_dir.as_ref() == Some(dir))
    });
    drop(documents);
    if let Some(dir) = last_of_skill {
        state.forget_regressions(&dir);
    }
    state.release.after_close();
}

/// Re-check every open document (after a settings change).
pub fn recheck_all(state: &State) {
    for open in state.documents().values() {
        open.changes.send_replace(open.doc.clone());
    }
}

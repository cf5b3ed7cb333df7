//! Transports to the judge model: core::grading builds the prompts and reads the replies,
//! these only carry one system prompt and one user message to a model and bring its text back.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use skillwatch_core::grading::judge::{Answer, AnswerFuture, JudgeClient, JudgeFuture};
use skillwatch_core::trajectory::TokenUsage;
use skillwatch_protocol::Price;

use crate::harness::{Harness, HostEnv, TrialStatus};
use crate::store::{Spend, Tokens};

use super::request::{JudgeEndpoint, JudgeSettings};
use super::{AgentRun, RunError, WorkspaceSource};

/// How long one judge call may take.
pub const JUDGE_TIMEOUT: Duration = Duration::from_secs(300);

/// The judge client `settings` describe.
pub fn client(
    settings: &JudgeSettings,
    host: &HostEnv,
    temp_root: PathBuf,
) -> Result<Arc<dyn JudgeClient>, RunError> {
    Ok(match &settings.endpoint {
        JudgeEndpoint::Openai {
            base_url,
            api_key_env,
        } => {
            let var = JudgeEndpoint::openai_key_var(api_key_env.as_deref());
            Arc::new(OpenAiJudge {
                client: reqwest::Client::builder()
                    .timeout(JUDGE_TIMEOUT)
                    .build()
                    .map_err(|e| RunError::Settings {
                        message: format!("judge HTTP client: {e}"),
                    })?,
                url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
                api_key: host.get(var).map(str::to_owned),
                model: settings.model.clone(),
            })
        }
        JudgeEndpoint::Harness { settings: h } => Arc::new(HarnessJudge {
            harness: crate::harness::settings::build(h, host)
                .map_err(|message| RunError::Settings { message })?,
            model: settings.model.clone(),
            host: host.clone(),
            temp_root,
        }),
    })
}

/// A judge whose calls are counted: every answered call leaves what it spent (the transport's
/// token figures at the judge's price) for the run to record and budget ([`JudgeMeter`]).
/// A call whose transport gives no figures counts as a call of unknown cost; a failed call
/// counts nothing (nothing says what it used).
pub struct Metered {
    inner: Arc<dyn JudgeClient>,
    price: Option<Price>,
    meter: JudgeMeter,
}

/// The calls a [`Metered`] judge made and nobody has taken yet.
#[derive(Clone, Default)]
pub struct JudgeMeter(Arc<Mutex<Vec<Spend>>>);

impl JudgeMeter {
    /// The calls counted since the last take.
    pub fn take(&self) -> Vec<Spend> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn count(&self, spend: Spend) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(spend);
    }
}

impl Metered {
    /// `inner`, counted at `price` (the judge model's; `None`: unknown).
    pub fn wrap(
        inner: Arc<dyn JudgeClient>,
        price: Option<Price>,
    ) -> (Arc<dyn JudgeClient>, JudgeMeter) {
        let meter = JudgeMeter::default();
        let judge = Metered {
            inner,
            price,
            meter: meter.clone(),
        };
        (Arc::new(judge), meter)
    }
}

impl JudgeClient for Metered {
    fn model(&self) -> &str {
        self.inner.model()
    }

    fn ask<'a>(&'a self, system: &'a str, user: &'a str) -> JudgeFuture<'a> {
        Box::pin(async move { self.ask_counted(system, user).await.map(|a| a.text) })
    }

    fn ask_counted<'a>(&'a self, system: &'a str, user: &'a str) -> AnswerFuture<'a> {
        Box::pin(async move {
            let answer = self.inner.ask_counted(system, user).await?;
            let model = self.inner.model();
            self.meter.count(match &answer.usage {
                Some(usage) => crate::runs::budget::spend(model, usage, self.price.as_ref()),
                None => Spend {
                    model: model.to_owned(),
                    tokens: Tokens::default(),
                    cost_usd: None,
                },
            });
            Ok(answer)
        })
    }
}

/// A judge over an OpenAI-compatible chat-completions endpoint, temperature 0.
pub struct OpenAiJudge {
    client: reqwest::Client,
    url: String,
    api_key: Option<String>,
    model: String,
}

impl OpenAiJudge {
    async fn complete(&self, system: &str, user: &str) -> Result<Answer, String> {
        let body = json!({"model": self.model, "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]});
        let mut req = self.client.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("POST {}: {}", self.url, crate::harness::error_chain(&e)))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| {
            format!(
                "POST {}: reading the response: {}",
                self.url,
                crate::harness::error_chain(&e)
            )
        })?;
        if !status.is_success() {
            let head: String = text.chars().take(300).collect();
            return Err(format!(
                "POST {}: expected status 200, found {status}: {head}",
                self.url
            ));
        }
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("POST {}: expected a JSON response, {e}", self.url))?;
        let text = v
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                format!(
                    "POST {}: expected choices[0].message.content text, found none",
                    self.url
                )
            })?;
        let usage = v.get("usage").map(TokenUsage::from_openai_chat);
        Ok(Answer { text, usage })
    }
}

impl JudgeClient for OpenAiJudge {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask<'a>(&'a self, system: &'a str, user: &'a str) -> JudgeFuture<'a> {
        Box::pin(async move { self.complete(system, user).await.map(|a| a.text) })
    }

    fn ask_counted<'a>(&'a self, system: &'a str, user: &'a str) -> AnswerFuture<'a> {
        Box::pin(self.complete(system, user))
    }
}

/// A judge that is an agent harness: the judge prompt becomes the task of an agent run
/// ([`AgentRun`], as every agent is started: a fresh folder, the scrubbed environment, the
/// timeout, a retry into a pristine folder when the agent could not start) in an empty
/// workspace with no skills; the agent's final answer is the reply.
pub struct HarnessJudge {
    harness: Arc<dyn Harness>,
    model: String,
    host: HostEnv,
    temp_root: PathBuf,
}

/// Retries of a judge agent that could not be started.
const JUDGE_RETRIES: u32 = 2;

impl HarnessJudge {
    async fn complete(&self, system: &str, user: &str) -> Result<Answer, String> {
        let dir = tempfile::Builder::new()
            .prefix("judge-")
            .tempdir_in(&self.temp_root)
            .map_err(|e| {
                format!(
                    "creating a judge workspace in {}: {e}",
                    self.temp_root.display()
                )
            })?;
        let prompt = format!("{system}\n\n{user}");
        let run = AgentRun {
            harness: self.harness.as_ref(),
            workspace: WorkspaceSource::empty("judge", "judge"),
            skill_dir: dir.path(),
            host: &self.host,
            prompt: &prompt,
            skills: Vec::new(),
            model: &self.model,
            timeout: JUDGE_TIMEOUT,
            plant: Default::default(),
            stop_when: None,
            retries: JUDGE_RETRIES,
        };
        let out = run
            .run(|n| dir.path().join(format!("try{n}")))
            .await
            .outcome;
        if out.status != TrialStatus::Ok {
            let why: Vec<String> = out.errors.iter().map(|e| e.message.clone()).collect();
            return Err(format!(
                "judge harness {}: {}",
                self.harness.name(),
                why.join("; ")
            ));
        }
        if out.final_output.trim().is_empty() {
            return Err(format!(
                "judge harness {}: expected an answer, found none",
                self.harness.name()
            ));
        }
        Ok(Answer {
            text: out.final_output,
            usage: Some(out.tokens),
        })
    }
}

impl JudgeClient for HarnessJudge {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask<'a>(&'a self, system: &'a str, user: &'a str) -> JudgeFuture<'a> {
        Box::pin(async move { self.complete(system, user).await.map(|a| a.text) })
    }

    fn ask_counted<'a>(&'a self, system: &'a str, user: &'a str) -> AnswerFuture<'a> {
        Box::pin(self.complete(system, user))
    }
}

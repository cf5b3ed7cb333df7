//! The one price table: `prices.toml` beside this file, shipped with skillwatch (dated, with
//! its sources), and `[prices."MODEL"]` of `skillwatch.toml` over it. Every cost skillwatch
//! states (a run's spending, `--max-cost`, the daemon's daily cap, `plan`'s estimate) is tokens
//! at a price from here; a model with no row has no price, and its cost is unknown rather than
//! guessed.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use skillwatch_protocol::Price;

/// The shipped table, as parsed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// When the figures were read, and where.
    pub source: Source,
    /// Prices by model name.
    pub models: BTreeMap<String, Price>,
}

/// Where the shipped figures come from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The day they were read (`YYYY-MM-DD`).
    pub date: String,
    /// Anthropic's pricing page.
    pub anthropic: String,
    /// OpenAI's pricing page.
    pub openai: String,
}

/// The table skillwatch ships.
pub fn shipped() -> &'static PriceTable {
    static TABLE: OnceLock<PriceTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str(include_str!("prices.toml")).expect("prices.toml is valid (unit-tested)")
    })
}

/// The price of `model`: `overrides` (`[prices]` of skillwatch.toml) first, then the shipped
/// table. A provider prefix (`anthropic/claude-sonnet-4-5`, as Harbor names models) is looked
/// up without it too.
pub fn price_of(model: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    let bare = model.rsplit_once('/').map_or(model, |(_, m)| m);
    [model, bare].into_iter().find_map(|name| {
        overrides
            .get(name)
            .or_else(|| shipped().models.get(name))
            .copied()
    })
}

/// What `--max-cost` says when the model has no price.
pub fn unpriced(model: &str) -> String {
    format!(
        "no price is known for the model {model:?} (skillwatch's price table of {} has none, nor has [prices] of skillwatch.toml): add [prices.\"{model}\"] with input, cached and output in USD per million tokens, or leave out the cost limit",
        shipped().source.date
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_is_dated_sourced_and_sane() {
        let t = shipped();
        assert_eq!(t.source.date.len(), 10, "{}", t.source.date);
        assert!(t.source.anthropic.starts_with("https://"));
        assert!(t.source.openai.starts_with("https://"));
        assert!(t.models.len() >= 10);
        for (model, p) in &t.models {
            assert!(p.is_valid() && p.input > 0.0 && p.output > 0.0, "{model}");
            assert!(
                p.cached.is_none_or(|c| c <= p.input),
                "{model}: cache dearer"
            );
        }
    }

    #[test]
    fn overrides_win_and_prefixes_are_seen_through() {
        let none = BTreeMap::new();
        let sonnet = price_of("claude-sonnet-4-5", &none).unwrap();
        assert_eq!(price_of("anthropic/claude-sonnet-4-5", &none), Some(sonnet));
        assert_eq!(price_of("mock-model", &none), None);
        let mine = Price {
            input: 1.0,
            cached: None,
            output: 2.0,
        };
        let overrides = BTreeMap::from([
            ("mock-model".to_owned(), mine),
            ("claude-sonnet-4-5".to_owned(), mine),
        ]);
        assert_eq!(price_of("mock-model", &overrides), Some(mine));
        assert_eq!(price_of("claude-sonnet-4-5", &overrides), Some(mine));
        assert!(unpriced("mock-model").contains("[prices.\"mock-model\"]"));
    }
}

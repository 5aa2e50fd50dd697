//! What a model call costs: [`Price`] per million tokens, with the prompt cache's (reads,
//! five-minute and one-hour writes), the batch APIs' and OpenAI's Flex tier's discounts, and a
//! built-in table of the list prices of common models with where each comes from
//! ([`Price::for_model`], [`Price::list`]), which an agent's stored price or a `--price`
//! flag overrides.

use crate::Usage;

/// A model's price in US dollars per million tokens: input, output, and input read from or
/// written to the provider's prompt cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    pub cache_read_per_mtok: f64,
    /// A cache write with the default lifetime (Anthropic's five minutes, an explicit GPT-5.6
    /// breakpoint); the input price where writes cost nothing extra (OpenAI's automatic cache).
    pub cache_write_per_mtok: f64,
    /// A cache write with a one-hour lifetime (Anthropic's `ttl: "1h"`, twice the input price).
    pub cache_write_1h_per_mtok: f64,
    /// What a call answered in a batch costs, as a share of the same call made directly
    /// (half, at both Anthropic and OpenAI).
    pub batch_factor: f64,
    /// The same share for OpenAI's Flex tier (`service_tier: "flex"`: batch prices on a
    /// synchronous call, which may be refused when capacity is short); `None` where the model
    /// has no such tier.
    pub flex_factor: Option<f64>,
}

/// How a listed model bills cache writes.
#[derive(Clone, Copy)]
enum Writes {
    /// Anthropic: 1.25 times input for five minutes, twice for an hour.
    Anthropic,
    /// OpenAI's automatic cache: written at the input price, nothing extra.
    Free,
    /// OpenAI GPT-5.6 and later: explicit breakpoints written at 1.25 times input.
    Paid,
}

/// Where the listed figures come from.
const ANTHROPIC: &str =
    "platform.claude.com/docs/en/about-claude/pricing, as read 2026-11 (batch 50%)";
const OPENAI: &str = "developers.openai.com/api/docs/pricing, as read 2026-11 (batch 50%)";
const OPENAI_FLEX: &str =
    "developers.openai.com/api/docs/pricing, as read 2026-11 (batch and flex 50%)";

/// One listed model: name prefix, input, output and cache-read prices per million tokens, how
/// it bills writes, and where the figures come from.
struct Listed {
    name: &'static str,
    input: f64,
    output: f64,
    read: f64,
    writes: Writes,
    source: &'static str,
}

const fn listed(
    name: &'static str,
    (input, output, read): (f64, f64, f64),
    writes: Writes,
    source: &'static str,
) -> Listed {
    Listed {
        name,
        input,
        output,
        read,
        writes,
        source,
    }
}

/// List prices by model name prefix, as the providers published them in late 2026. The
/// longest prefix that names a model wins, so `gpt-4o-mini-2024-07-18` is priced as
/// `gpt-4o-mini`, not `gpt-4o`. Long-prompt surcharges (Haiku 5.5 past 100k tokens) are not
/// modelled: the rows hold the common case.
const LIST_PRICES: &[Listed] = &[
    listed(
        "claude-fable-5-1",
        (10.0, 50.0, 0.25),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-fable-5",
        (10.0, 50.0, 1.0),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-5-5",
        (4.0, 20.0, 0.2),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-5",
        (5.0, 25.0, 0.5),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-4-8",
        (5.0, 25.0, 0.5),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-4-7",
        (5.0, 25.0, 0.5),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-4-6",
        (5.0, 25.0, 0.5),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-4-5",
        (5.0, 25.0, 0.5),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-opus-4",
        (15.0, 75.0, 1.5),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-sonnet-5-5",
        (2.0, 10.0, 0.1),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-sonnet-5",
        (2.0, 10.0, 0.2),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-sonnet-4",
        (3.0, 15.0, 0.3),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-3-7-sonnet",
        (3.0, 15.0, 0.3),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-3-5-sonnet",
        (3.0, 15.0, 0.3),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-haiku-5-5",
        (0.1, 0.5, 0.01),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-haiku-4-5",
        (1.0, 5.0, 0.1),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-3-5-haiku",
        (0.8, 4.0, 0.08),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed(
        "claude-3-haiku",
        (0.25, 1.25, 0.03),
        Writes::Anthropic,
        ANTHROPIC,
    ),
    listed("gpt-5.6-sol", (5.0, 30.0, 0.5), Writes::Paid, OPENAI_FLEX),
    listed(
        "gpt-5.6-terra",
        (2.5, 15.0, 0.25),
        Writes::Paid,
        OPENAI_FLEX,
    ),
    listed("gpt-5.6-luna", (1.0, 6.0, 0.1), Writes::Paid, OPENAI_FLEX),
    listed(
        "gpt-5.4-mini",
        (0.75, 4.5, 0.075),
        Writes::Free,
        OPENAI_FLEX,
    ),
    listed("gpt-5.4", (2.5, 15.0, 0.25), Writes::Free, OPENAI_FLEX),
    listed("gpt-5-nano", (0.05, 0.4, 0.005), Writes::Free, OPENAI_FLEX),
    listed("gpt-5-mini", (0.25, 2.0, 0.025), Writes::Free, OPENAI_FLEX),
    listed("gpt-5", (1.25, 10.0, 0.125), Writes::Free, OPENAI_FLEX),
    listed("gpt-4.1-nano", (0.1, 0.4, 0.025), Writes::Free, OPENAI),
    listed("gpt-4.1-mini", (0.4, 1.6, 0.1), Writes::Free, OPENAI),
    listed("gpt-4.1", (2.0, 8.0, 0.5), Writes::Free, OPENAI),
    listed("gpt-4o-mini", (0.15, 0.6, 0.075), Writes::Free, OPENAI),
    listed("gpt-4o", (2.5, 10.0, 1.25), Writes::Free, OPENAI),
    listed("o4-mini", (1.1, 4.4, 0.275), Writes::Free, OPENAI_FLEX),
    listed("o3", (2.0, 8.0, 0.5), Writes::Free, OPENAI_FLEX),
];

impl Listed {
    fn price(&self) -> Price {
        let mut price = Price::new(self.input, self.output);
        price.cache_read_per_mtok = self.read;
        match self.writes {
            Writes::Anthropic => {}
            Writes::Free => {
                price.cache_write_per_mtok = self.input;
                price.cache_write_1h_per_mtok = self.input;
            }
            Writes::Paid => price.cache_write_1h_per_mtok = price.cache_write_per_mtok,
        }
        if self.source == OPENAI_FLEX {
            price.flex_factor = Some(0.5);
        }
        price
    }
}

impl Price {
    /// The price of `input` and `output`, with cache reads at a tenth of the input price and
    /// writes at 1.25 times it (twice for an hour), as Anthropic bills them.
    pub fn new(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        Self {
            input_per_mtok,
            output_per_mtok,
            cache_read_per_mtok: input_per_mtok / 10.0,
            cache_write_per_mtok: input_per_mtok * 1.25,
            cache_write_1h_per_mtok: input_per_mtok * 2.0,
            batch_factor: 0.5,
            flex_factor: None,
        }
    }

    /// The built-in list price of `model` (a provider's model name, dated or not), if the
    /// table knows it.
    pub fn for_model(model: &str) -> Option<Price> {
        Self::listed(model).map(Listed::price)
    }

    fn listed(model: &str) -> Option<&'static Listed> {
        LIST_PRICES
            .iter()
            .filter(|row| model.starts_with(row.name))
            .max_by_key(|row| row.name.len())
    }

    /// The built-in table, for showing: (model prefix, price, where it comes from).
    pub fn list() -> impl Iterator<Item = (&'static str, Price, &'static str)> {
        LIST_PRICES
            .iter()
            .map(|row| (row.name, row.price(), row.source))
    }

    /// Reads `IN,OUT[,READ[,WRITE[,WRITE_1H]]]`: dollars per million tokens of input, output,
    /// and cached input read, written and written for an hour (by default a tenth of IN, 1.25
    /// times it and twice it). Batches bill half; there is no flex tier.
    pub fn parse(text: &str) -> Result<Price, String> {
        let parse = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("{s:?} is not a price in dollars"))
        };
        let parts: Vec<&str> = text.split(',').collect();
        let [input, output, rest @ ..] = parts.as_slice() else {
            return Err("expected IN,OUT: dollars per million input and output tokens".to_owned());
        };
        let mut price = Price::new(parse(input)?, parse(output)?);
        if rest.len() > 3 {
            return Err(
                "expected IN,OUT[,READ[,WRITE[,WRITE_1H]]]: dollars per million tokens of \
                 input, output, cached input read, written, and written for an hour"
                    .to_owned(),
            );
        }
        let optional = [
            &mut price.cache_read_per_mtok,
            &mut price.cache_write_per_mtok,
            &mut price.cache_write_1h_per_mtok,
        ];
        for (rate, text) in optional.into_iter().zip(rest) {
            *rate = parse(text)?;
        }
        Ok(price)
    }

    /// The form [`Price::parse`] reads, with every rate written out.
    pub fn to_text(&self) -> String {
        format!(
            "{},{},{},{},{}",
            self.input_per_mtok,
            self.output_per_mtok,
            self.cache_read_per_mtok,
            self.cache_write_per_mtok,
            self.cache_write_1h_per_mtok
        )
    }

    /// The cost of one call's `usage`.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let written_1h = usage
            .cache_creation_1h_input_tokens
            .min(usage.cache_creation_input_tokens);
        let written = usage.cache_creation_input_tokens - written_1h;
        (usage.input_tokens as f64 * self.input_per_mtok
            + usage.cache_read_input_tokens as f64 * self.cache_read_per_mtok
            + written as f64 * self.cache_write_per_mtok
            + written_1h as f64 * self.cache_write_1h_per_mtok
            + usage.output_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

#[cfg(test)]
mod tests {
    use super::Price;

    #[test]
    fn dated_names_take_the_longest_listed_prefix() {
        let check = |model: &str, expected: Option<(f64, f64, f64, f64)>| {
            let got = Price::for_model(model).map(|p| {
                (
                    p.input_per_mtok,
                    p.output_per_mtok,
                    p.cache_read_per_mtok,
                    p.cache_write_per_mtok,
                )
            });
            assert_eq!(got, expected, "{model}");
        };
        check("claude-sonnet-4-5-20250929", Some((3.0, 15.0, 0.3, 3.75)));
        check("claude-opus-4-5-20251101", Some((5.0, 25.0, 0.5, 6.25)));
        check("claude-opus-4-1-20250805", Some((15.0, 75.0, 1.5, 18.75)));
        check("gpt-4o-mini-2024-07-18", Some((0.15, 0.6, 0.075, 0.15)));
        check("gpt-4o", Some((2.5, 10.0, 1.25, 2.5)));
        check("gpt-5-mini", Some((0.25, 2.0, 0.025, 0.25)));
        check("gpt-5.6-terra", Some((2.5, 15.0, 0.25, 3.125)));
        check("claude-sonnet-5-5", Some((2.0, 10.0, 0.1, 2.5)));
        check("claude-haiku-4-5-20251001", Some((1.0, 5.0, 0.1, 1.25)));
        check("llama3.1:8b", None);
        check("", None);
    }

    #[test]
    fn a_price_reads_back_what_it_writes() {
        for (_, mut price, _) in Price::list() {
            // The text form has no flex tier.
            price.flex_factor = None;
            assert_eq!(Price::parse(&price.to_text()), Ok(price));
        }
        let p = Price::parse("3,15").expect("price");
        assert_eq!((p.cache_read_per_mtok, p.cache_write_per_mtok), (0.3, 3.75));
        assert!(Price::parse("3").is_err());
        assert!(Price::parse("3,15,1,2,3,4").is_err());
        assert!(Price::parse("3,-1").expect_err("negative").contains("-1"));
    }
}

#[cfg(test)]
mod cost_tests {
    use super::Price;
    use crate::Usage;

    #[test]
    fn one_hour_writes_cost_twice_the_input_and_gpt_5_6_writes_a_quarter_more() {
        let sonnet = Price::for_model("claude-sonnet-4-6").expect("listed");
        let usage = Usage {
            cache_creation_input_tokens: 1_000_000,
            cache_creation_1h_input_tokens: 400_000,
            ..Usage::default()
        };
        // 600k at 3.75 and 400k at 6.
        assert!((sonnet.cost(&usage) - (2.25 + 2.4)).abs() < 1e-9);
        let terra = Price::for_model("gpt-5.6-terra").expect("listed");
        assert_eq!(terra.cache_write_per_mtok, 2.5 * 1.25);
        assert_eq!(terra.flex_factor, Some(0.5));
        let old = Price::for_model("gpt-4o").expect("listed");
        assert_eq!((old.cache_write_per_mtok, old.flex_factor), (2.5, None));
        let (_, _, source) = Price::list()
            .find(|(name, ..)| *name == "claude-opus-4-6")
            .expect("listed");
        assert!(source.contains("claude.com"), "{source}");
    }
}

//! What a model call costs: [`Price`] per million tokens, with the prompt cache's and the
//! batch APIs' discounts, and a built-in table of the list prices of common models
//! ([`Price::for_model`]), which an agent's stored price or a `--price` flag overrides.

use crate::Usage;

/// A model's price in US dollars per million tokens: input, output, and input read from or
/// written to the provider's prompt cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    pub cache_read_per_mtok: f64,
    pub cache_write_per_mtok: f64,
    /// What a call answered in a batch costs, as a share of the same call made directly
    /// (half, at both Anthropic and OpenAI).
    pub batch_factor: f64,
}

/// List prices (dollars per million input and output tokens, and cached input read) by model
/// name prefix, as the providers published them in late 2025. The longest prefix that names
/// a model wins, so `gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`, not `gpt-4o`.
/// Anthropic's cache writes cost 1.25 times input; OpenAI bills none.
const LIST_PRICES: &[(&str, f64, f64, f64)] = &[
    ("claude-opus-4-5", 5.0, 25.0, 0.5),
    ("claude-opus-4", 15.0, 75.0, 1.5),
    ("claude-sonnet-4", 3.0, 15.0, 0.3),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.3),
    ("claude-3-5-sonnet", 3.0, 15.0, 0.3),
    ("claude-haiku-4-5", 1.0, 5.0, 0.1),
    ("claude-3-5-haiku", 0.8, 4.0, 0.08),
    ("claude-3-haiku", 0.25, 1.25, 0.03),
    ("gpt-5-nano", 0.05, 0.4, 0.005),
    ("gpt-5-mini", 0.25, 2.0, 0.025),
    ("gpt-5", 1.25, 10.0, 0.125),
    ("gpt-4.1-nano", 0.1, 0.4, 0.025),
    ("gpt-4.1-mini", 0.4, 1.6, 0.1),
    ("gpt-4.1", 2.0, 8.0, 0.5),
    ("gpt-4o-mini", 0.15, 0.6, 0.075),
    ("gpt-4o", 2.5, 10.0, 1.25),
    ("o4-mini", 1.1, 4.4, 0.275),
    ("o3", 2.0, 8.0, 0.5),
];

impl Price {
    /// The price of `input` and `output`, with cache reads at a tenth of the input price and
    /// writes at 1.25 times it (Anthropic's five-minute cache; OpenAI bills no writes).
    pub fn new(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        Self {
            input_per_mtok,
            output_per_mtok,
            cache_read_per_mtok: input_per_mtok / 10.0,
            cache_write_per_mtok: input_per_mtok * 1.25,
            batch_factor: 0.5,
        }
    }

    /// The built-in list price of `model` (a provider's model name, dated or not), if the
    /// table knows it.
    pub fn for_model(model: &str) -> Option<Price> {
        let (name, input, output, read) = LIST_PRICES
            .iter()
            .filter(|(name, ..)| model.starts_with(name))
            .max_by_key(|(name, ..)| name.len())?;
        let mut price = Price::new(*input, *output);
        price.cache_read_per_mtok = *read;
        if !name.starts_with("claude") {
            price.cache_write_per_mtok = *input;
        }
        Some(price)
    }

    /// The built-in table, for showing: (model prefix, price).
    pub fn list() -> impl Iterator<Item = (&'static str, Price)> {
        LIST_PRICES.iter().map(|(name, ..)| {
            (
                *name,
                Price::for_model(name).expect("every row prices itself"),
            )
        })
    }

    /// Reads `IN,OUT[,READ[,WRITE]]`: dollars per million tokens of input, output, and cached
    /// input read and written (by default a tenth of IN and 1.25 times it).
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
        match rest {
            [] => {}
            [read] => price.cache_read_per_mtok = parse(read)?,
            [read, write] => {
                price.cache_read_per_mtok = parse(read)?;
                price.cache_write_per_mtok = parse(write)?;
            }
            _ => {
                return Err(
                    "expected IN,OUT[,READ[,WRITE]]: dollars per million tokens of input, output, \
                     cached input read and written"
                        .to_owned(),
                );
            }
        }
        Ok(price)
    }

    /// The form [`Price::parse`] reads, with every rate written out.
    pub fn to_text(&self) -> String {
        format!(
            "{},{},{},{}",
            self.input_per_mtok,
            self.output_per_mtok,
            self.cache_read_per_mtok,
            self.cache_write_per_mtok
        )
    }

    /// The cost of one call's `usage`.
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input_per_mtok
            + usage.cache_read_input_tokens as f64 * self.cache_read_per_mtok
            + usage.cache_creation_input_tokens as f64 * self.cache_write_per_mtok
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
        check("llama3.1:8b", None);
        check("", None);
    }

    #[test]
    fn a_price_reads_back_what_it_writes() {
        for (_, price) in Price::list() {
            assert_eq!(Price::parse(&price.to_text()), Ok(price));
        }
        let p = Price::parse("3,15").expect("price");
        assert_eq!((p.cache_read_per_mtok, p.cache_write_per_mtok), (0.3, 3.75));
        assert!(Price::parse("3").is_err());
        assert!(Price::parse("3,15,1,2,3").is_err());
        assert!(Price::parse("3,-1").expect_err("negative").contains("-1"));
    }
}

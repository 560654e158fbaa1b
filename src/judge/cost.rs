//! What judge calls cost: the price table (templates/prices.yaml, user-editable), token
//! counts of prompts, and the estimate of a run made before any call.

use crate::warning::Warning;
use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::prompt::Prompt;
use super::spec::Spec;
pub(crate) use super::tokens::{Tokenizer, overhead};
use super::usage::Usage;
use crate::error::Result;

const EMBEDDED: &str = include_str!("../../templates/prices.yaml");

/// The context budget when the table names none (tokens).
const DEFAULT_BUDGET: u64 = 32_000;
/// Tokens kept free of the budget for the answer.
const ANSWER_ROOM: u64 = 8_000;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    answer_tokens: Option<u64>,
    context_budget: Option<u64>,
    batch: Option<f64>,
    min_cached_prefix: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    model: String,
    input: f64,
    cached_input: f64,
    #[serde(default)]
    cache_write: Option<f64>,
    output: f64,
    #[serde(default)]
    batch: Option<f64>,
    context: u64,
    tokenizer: Tokenizer,
    #[serde(default)]
    min_cached_prefix: Option<u64>,
    #[serde(default)]
    answer_tokens: Option<u64>,
    #[serde(default)]
    context_budget: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    schema: String,
    #[serde(default)]
    defaults: Defaults,
    models: Vec<Entry>,
}

/// One model's prices (USD per million tokens) and limits, defaults filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Price {
    /// The table's entry that matched.
    pub model: String,
    pub input: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    pub output: f64,
    /// A batch interface's share of the prices.
    pub batch: f64,
    pub context: u64,
    #[serde(skip)]
    pub tokenizer: Tokenizer,
    #[serde(skip)]
    pub min_cached_prefix: u64,
    #[serde(skip)]
    pub answer_tokens: u64,
    /// The prompt size the context budget aims under by default (tokens).
    pub context_budget: u64,
}

impl Price {
    /// What `usage` costs at these prices: cached input at its price, the rest of the input
    /// at the cache-write price (the input price where writes cost nothing extra: prefix
    /// prompts are written to the cache as they are read), output at the output price.
    pub(crate) fn cost(&self, usage: &Usage) -> f64 {
        let fresh = usage.input_tokens.saturating_sub(usage.cached_input_tokens);
        (fresh as f64 * self.cache_write
            + usage.cached_input_tokens as f64 * self.cached_input
            + usage.output_tokens as f64 * self.output)
            / 1e6
    }
}

/// The price table: embedded, or the templates directory's prices.yaml instead.
#[derive(Debug, Clone)]
pub(crate) struct Prices {
    entries: Vec<Price>,
    /// The budget of judges the table has no entry for.
    default_budget: u64,
    /// Where the table came from, for messages.
    pub source: String,
}

impl Prices {
    pub(crate) fn load(templates_dir: Option<&Path>) -> Result<Prices> {
        let own = templates_dir.map(|d| d.join("prices.yaml"));
        let (text, source) = match own.as_deref() {
            Some(p) => match crate::files::read_text_if_exists(p, "price table", 1 << 20)? {
                Some(t) => (t, p.display().to_string()),
                None => (EMBEDDED.to_string(), "templates/prices.yaml".to_string()),
            },
            None => (EMBEDDED.to_string(), "templates/prices.yaml".to_string()),
        };
        Prices::parse(&text, &source)
    }

    /// No table: what a run of only the offline judge, which sends no prompt, holds.
    pub(crate) fn none() -> Prices {
        Prices {
            entries: Vec::new(),
            default_budget: DEFAULT_BUDGET,
            source: String::new(),
        }
    }

    fn parse(text: &str, source: &str) -> Result<Prices> {
        let file: File = crate::files::parse_yaml(text, source).map_err(|e| {
            e.hint("each model has model, input, cached_input, output, context and tokenizer (docs/judge.md#cost)")
        })?;
        if file.schema != "sage.prices/1" {
            return Err(crate::error::Error::input(format!(
                "{source}: schema is {:?}, expected sage.prices/1",
                file.schema
            )));
        }
        let d = &file.defaults;
        let entries = file
            .models
            .into_iter()
            .map(|e| Price {
                model: e.model.to_lowercase(),
                input: e.input,
                cached_input: e.cached_input,
                cache_write: e.cache_write.unwrap_or(e.input),
                output: e.output,
                batch: e.batch.or(d.batch).unwrap_or(1.0),
                context: e.context,
                tokenizer: e.tokenizer,
                min_cached_prefix: e.min_cached_prefix.or(d.min_cached_prefix).unwrap_or(1024),
                answer_tokens: e.answer_tokens.or(d.answer_tokens).unwrap_or(250),
                // Room for the answer: the budget never reaches the window.
                context_budget: e
                    .context_budget
                    .or(d.context_budget)
                    .unwrap_or(DEFAULT_BUDGET)
                    .min(e.context.saturating_sub(ANSWER_ROOM)),
            })
            .collect();
        Ok(Prices {
            entries,
            default_budget: d.context_budget.unwrap_or(DEFAULT_BUDGET),
            source: source.to_string(),
        })
    }

    /// The entry for a model: the longest whose name starts the model's (after any
    /// `provider/` part), case ignored.
    pub(crate) fn for_model(&self, model: &str) -> Option<&Price> {
        let m = model.to_lowercase();
        let m = m.rsplit('/').next().unwrap_or(&m);
        self.entries
            .iter()
            .filter(|p| m.starts_with(&p.model))
            .max_by_key(|p| p.model.len())
    }

    /// A judge's default context budget in tokens: its model's entry's, else the table's.
    pub(crate) fn budget_for(&self, spec: &Spec) -> usize {
        self.for_judge(spec)
            .map_or(self.default_budget, |p| p.context_budget) as usize
    }

    /// What a judge's tokens are counted with: its model's tokenizer, else o200k_base counts.
    pub(crate) fn tokenizer_for(&self, spec: &Spec) -> Tokenizer {
        self.for_judge(spec)
            .map_or(Tokenizer::Approx, |p| p.tokenizer)
    }

    /// The entry for a judge, when it is a model with a price.
    pub(crate) fn for_judge(&self, spec: &Spec) -> Option<&Price> {
        match spec {
            Spec::OpenAi { model } | Spec::Anthropic { model } => self.for_model(model),
            _ => None,
        }
    }
}

/// The price entry a judge's estimate used, as the estimate names it: the entry alone when it
/// is the model's own, else saying whose prices they are (`claude-opus-4-1` at
/// `claude-opus-4`'s), so a model priced as its family is never shown as another model.
fn priced_as(judge: &str, entry: &str) -> String {
    let model = judge
        .split_once(':')
        .map_or(judge, |(_, m)| m)
        .to_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    match model == entry {
        true => entry.to_string(),
        false => format!("{model} at {entry}'s prices (no entry of its own)"),
    }
}

/// What one judge (one repeat) would send, counted before anything is sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Estimate {
    /// The batch case it is for (`batch --estimate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    pub judge: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Requests that would be made.
    pub calls: u64,
    /// Prompts already answered in the on-disk cache: no request, no cost.
    pub cached_answers: u64,
    /// Input tokens of the requests.
    pub input_tokens: u64,
    /// Of those, what a provider's prompt cache should serve: each prompt's prefix shared
    /// with the turn before's.
    pub cached_input_tokens: u64,
    /// Output tokens: the price table's tokens per answer, per turn answered.
    pub output_tokens: u64,
    pub largest_prompt_tokens: u64,
    pub tokenizer: String,
    /// The price table's entry, when the model has one.
    pub price: Option<Price>,
    /// USD at those prices; `None` without one.
    pub cost_usd: Option<f64>,
    /// USD through the provider's batch interface (`batch --batch-api`).
    pub batch_cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::warning::Warning>,
}

/// `sage.estimate/1`: what a run's judge calls would cost, made before any of them.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EstimateDoc {
    pub schema: &'static str,
    pub tool: crate::tool::Tool,
    /// Turns in scope, and of those the ones put to a model judge (not administrative).
    pub turns: u64,
    pub judged: u64,
    pub protocol: &'static str,
    /// The price table read.
    pub prices: String,
    pub estimates: Vec<Estimate>,
    pub total: Total,
    /// What the reader should know: no session found, the report's warnings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The sums over every judge and repeat.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Total {
    pub calls: u64,
    pub cached_answers: u64,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// `None` when a judge that would make calls has no price.
    pub cost_usd: Option<f64>,
    pub batch_cost_usd: Option<f64>,
}

impl EstimateDoc {
    pub(crate) fn new(
        turns: u64,
        judged: u64,
        protocol: &'static str,
        prices: String,
        estimates: Vec<Estimate>,
    ) -> EstimateDoc {
        let mut total = Total {
            cost_usd: Some(0.0),
            batch_cost_usd: Some(0.0),
            ..Total::default()
        };
        for e in &estimates {
            total.calls += e.calls;
            total.cached_answers += e.cached_answers;
            total.input_tokens += e.input_tokens;
            total.cached_input_tokens += e.cached_input_tokens;
            total.output_tokens += e.output_tokens;
            let priced = e.calls == 0 || e.cost_usd.is_some();
            let add = |t: &mut Option<f64>, v: Option<f64>| {
                *t = if priced {
                    t.map(|t| t + v.unwrap_or(0.0))
                } else {
                    None
                };
            };
            add(&mut total.cost_usd, e.cost_usd);
            add(&mut total.batch_cost_usd, e.batch_cost_usd);
        }
        EstimateDoc {
            schema: "sage.estimate/1",
            tool: crate::tool::Tool::current(),
            turns,
            judged,
            protocol,
            prices,
            estimates,
            total,
            notes: Vec::new(),
        }
    }

    /// Several cases' estimates as one (`blame-origin --all`, `batch`): every judge line
    /// kept, the totals summed again.
    pub(crate) fn combine(docs: Vec<EstimateDoc>) -> Option<EstimateDoc> {
        let first = docs.first()?;
        let (protocol, prices) = (first.protocol, first.prices.clone());
        let (mut turns, mut judged) = (0, 0);
        let mut estimates = Vec::new();
        let mut notes = Vec::new();
        for d in docs {
            turns += d.turns;
            judged += d.judged;
            estimates.extend(d.estimates);
            notes.extend(d.notes);
        }
        let mut doc = EstimateDoc::new(turns, judged, protocol, prices, estimates);
        doc.notes = notes;
        Some(doc)
    }

    /// The estimate as the terminal shows it: one line per judge, then the total.
    pub(crate) fn render(&self) -> String {
        let mut out = format!(
            "estimate · {} turns in scope, {} put to a model judge · --protocol {} · nothing was sent\n",
            self.turns, self.judged, self.protocol
        );
        let usd = |v: Option<f64>| v.map_or("no price".to_string(), |v| format!("${}", money(v)));
        for e in &self.estimates {
            let mut name = match e.repeat {
                Some(r) => format!("{} (repeat {r})", e.judge),
                None => e.judge.clone(),
            };
            if let Some(c) = &e.case {
                name = format!("case {c}, {name}");
            }
            if e.calls == 0 && e.cached_answers == 0 {
                out.push_str(&format!("  {name}: no requests\n"));
                continue;
            }
            let share = (e.cached_input_tokens * 100)
                .checked_div(e.input_tokens)
                .unwrap_or(0);
            out.push_str(&format!(
                "  {name}: {} calls ({} answered from the cache) · {} input tokens, {share}% from the provider's prompt cache · {} output · largest prompt {} · {} ({} by batch)\n",
                e.calls,
                e.cached_answers,
                thousands(e.input_tokens),
                thousands(e.output_tokens),
                thousands(e.largest_prompt_tokens),
                usd(e.cost_usd),
                usd(e.batch_cost_usd),
            ));
            if let Some(p) = &e.price {
                out.push_str(&format!(
                    "    {}: ${} input, ${} cached, ${} output per million tokens; tokens: {}\n",
                    priced_as(&e.judge, &p.model),
                    money(p.input),
                    money(p.cached_input),
                    money(p.output),
                    e.tokenizer
                ));
            }
            for w in &e.warnings {
                out.push_str(&format!("    note: {w}\n"));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out.push_str(&format!(
            "total: {} calls · {} input tokens ({} cached) · {} output · {} ({} by batch) · prices from {}\n",
            self.total.calls,
            thousands(self.total.input_tokens),
            thousands(self.total.cached_input_tokens),
            thousands(self.total.output_tokens),
            usd(self.total.cost_usd),
            usd(self.total.batch_cost_usd),
            self.prices
        ));
        out
    }
}

/// Dollars with cents, and with as many more digits as a small amount needs to show
/// (0.075, 0.0022), never trailing zeros past the cents.
fn money(v: f64) -> String {
    let digits = if v == 0.0 || v >= 0.01 {
        3
    } else {
        (2 - v.log10().floor() as i32).clamp(3, 8) as usize
    };
    let s = format!("{v:.digits$}");
    let s = s.trim_end_matches('0');
    match s.split_once('.') {
        Some((_, cents)) if cents.len() >= 2 => s.to_string(),
        Some((whole, cents)) => format!("{whole}.{cents:0<2}"),
        None => format!("{s}.00"),
    }
}

/// 1234567 as 1,234,567.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a run's judge calls have spent under `--max-cost`, shared by every judge, repeat
/// and case: settled calls at what they cost, calls in flight at what they should.
#[derive(Debug)]
pub(crate) struct Spend {
    limit: f64,
    /// (settled, reserved for calls in flight), USD.
    state: std::sync::Mutex<(f64, f64)>,
}

impl Spend {
    pub(crate) fn new(limit: f64) -> Spend {
        Spend {
            limit,
            state: std::sync::Mutex::new((0.0, 0.0)),
        }
    }

    /// Reserves `projected` for a call, or says, with the figures, why it may not be made.
    pub(crate) fn reserve(&self, projected: f64) -> std::result::Result<(), String> {
        let mut s = self.state.lock().expect("spend");
        let committed = s.0 + s.1;
        if committed + projected > self.limit {
            // Spent is what calls that are back cost; calls in flight are only set aside.
            let in_flight = match s.1 > 0.0 {
                true => format!(", ${} set aside for calls in flight", money(s.1)),
                false => String::new(),
            };
            return Err(format!(
                "not sent: the call (about ${}) would take the run past --max-cost ${} (${} spent{in_flight}, ${} left)",
                money(projected),
                money(self.limit),
                money(s.0),
                money((self.limit - committed).max(0.0))
            ));
        }
        s.1 += projected;
        Ok(())
    }

    /// A call is back: its reservation goes, what it cost stays.
    pub(crate) fn settle(&self, reserved: f64, cost: f64) {
        let mut s = self.state.lock().expect("spend");
        s.1 = (s.1 - reserved).max(0.0);
        s.0 += cost;
    }

    /// What the calls that are back spent, against the limit, for stderr.
    pub(crate) fn said(&self) -> String {
        let spent = self.state.lock().expect("spend").0;
        format!(
            "judge calls spent ${} of --max-cost ${}",
            money(spent),
            money(self.limit)
        )
    }
}

/// Counts blocks once: turn t's prompt repeats turn t-1's blocks, so a session's prompts
/// hold each block many times but are counted in the time of one.
pub(crate) struct Counter {
    tokenizer: Tokenizer,
    seen: HashMap<String, u64>,
}

impl Counter {
    pub(crate) fn new(tokenizer: Tokenizer) -> Counter {
        Counter {
            tokenizer,
            seen: HashMap::new(),
        }
    }

    fn part(&mut self, text: &str) -> u64 {
        if let Some(&n) = self.seen.get(text) {
            return n;
        }
        let n = self.tokenizer.count(text);
        self.seen.insert(text.to_string(), n);
        n
    }

    /// The prompt's tokens, part by part (system, each block, the instruction), each part's
    /// own count: the parts end at line breaks, where no token spans them.
    pub(crate) fn parts(&mut self, p: &Prompt) -> Vec<u64> {
        std::iter::once(p.system.as_str())
            .chain(p.blocks.iter().map(String::as_str))
            .chain(std::iter::once(p.instruction.as_str()))
            .map(|s| self.part(s))
            .collect()
    }
}

/// The estimate of a run whose prompts are `prompts` (in the order they would be sent),
/// `answered` of them already in the answer cache, each answer covering `turns_per_answer`
/// turns.
pub(crate) fn estimate(
    judge: &Spec,
    repeat: Option<u32>,
    prompts: &[(&Prompt, bool)],
    turns_per_answer: u64,
    prices: &Prices,
) -> Estimate {
    let price = prices.for_judge(judge).cloned();
    let tokenizer = price.as_ref().map_or(Tokenizer::Approx, |p| p.tokenizer);
    let mut counter = Counter::new(tokenizer);
    let schema = serde_json::to_string(&super::answer::schema()).unwrap_or_default();
    let extra = overhead(counter.part(&schema));
    let min_cached = price.as_ref().map_or(u64::MAX, |p| p.min_cached_prefix);
    let answer_tokens = price.as_ref().map_or(250, |p| p.answer_tokens);
    let mut e = Estimate {
        case: None,
        judge: judge.name(),
        repeat,
        calls: 0,
        cached_answers: 0,
        input_tokens: 0,
        cached_input_tokens: 0,
        output_tokens: 0,
        largest_prompt_tokens: 0,
        tokenizer: tokenizer.name().to_string(),
        price: price.clone(),
        cost_usd: None,
        batch_cost_usd: None,
        warnings: Vec::new(),
    };
    let mut before: Option<&Prompt> = None;
    for &(p, answered) in prompts {
        let parts = counter.parts(p);
        let total: u64 = parts.iter().sum::<u64>() + extra;
        e.largest_prompt_tokens = e.largest_prompt_tokens.max(total);
        if answered {
            e.cached_answers += 1;
            before = Some(p);
            continue;
        }
        // The parts this prompt shares, from the start, with the one sent before it.
        let shared_parts = before.map_or(0, |b| shared_prefix_parts(b, p));
        let shared: u64 = parts[..shared_parts].iter().sum();
        let cached = if shared >= min_cached { shared } else { 0 };
        e.calls += 1;
        e.input_tokens += total;
        e.cached_input_tokens += cached;
        e.output_tokens += answer_tokens * turns_per_answer;
        before = Some(p);
    }
    if *judge == Spec::Offline {
        // Phrase lists on this machine: free, and nothing to count.
        e.tokenizer = "none".into();
        e.cost_usd = Some(0.0);
        e.batch_cost_usd = Some(0.0);
    } else if let Some(p) = &price {
        let cost = p.cost(&Usage {
            input_tokens: e.input_tokens,
            output_tokens: e.output_tokens,
            cached_input_tokens: e.cached_input_tokens,
            cost_usd: None,
        });
        e.cost_usd = Some(cost);
        e.batch_cost_usd = Some(cost * p.batch);
        if e.largest_prompt_tokens > p.context {
            e.warnings.push(Warning::ContextExceeded {
                tokens: e.largest_prompt_tokens,
                model: p.model.to_string(),
                context: p.context,
            });
        }
    } else if matches!(judge, Spec::OpenAi { .. } | Spec::Anthropic { .. }) {
        e.warnings.push(Warning::NoPrice {
            judge: judge.name(),
            source: prices.source.to_string(),
        });
    }
    if tokenizer == Tokenizer::Approx && e.calls > 0 {
        e.warnings.push(Warning::ApproxTokens);
    }
    e
}

/// How many leading parts (system, blocks…) two prompts have in common, byte for byte: the
/// instruction, last, never counts, as it names the turn.
fn shared_prefix_parts(a: &Prompt, b: &Prompt) -> usize {
    if a.system != b.system {
        return 0;
    }
    1 + a
        .blocks
        .iter()
        .zip(&b.blocks)
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(blocks: &[&str], instruction: &str) -> Prompt {
        Prompt {
            system: "You judge turns.\n".into(),
            blocks: blocks.iter().map(|b| b.to_string()).collect(),
            instruction: instruction.into(),
        }
    }

    #[test]
    fn the_embedded_table_reads_and_the_longest_name_wins() {
        let p = Prices::load(None).unwrap();
        assert_eq!(
            p.for_model("gpt-4o-mini-2024-07-18").unwrap().model,
            "gpt-4o-mini"
        );
        assert_eq!(p.for_model("gpt-4o").unwrap().model, "gpt-4o");
        assert_eq!(p.for_model("openai/GPT-4.1").unwrap().model, "gpt-4.1");
        let opus = p.for_model("claude-opus-4-5-20251101").unwrap();
        assert_eq!((opus.model.as_str(), opus.input), ("claude-opus-4-5", 5.0));
        assert_eq!(p.for_model("claude-opus-4-1").unwrap().input, 15.0);
        // Sonnet 4.5 has its own entry, not Sonnet 4's (issue 44); a dated name finds it.
        for m in ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"] {
            assert_eq!(p.for_model(m).unwrap().model, "claude-sonnet-4-5", "{m}");
        }
        assert_eq!(
            p.for_model("claude-sonnet-4-20250514").unwrap().model,
            "claude-sonnet-4"
        );
        assert!(p.for_model("llama3.1:8b").is_none());
        let haiku = p.for_model("claude-haiku-4-5").unwrap();
        assert_eq!((haiku.min_cached_prefix, haiku.batch), (2048, 0.5));
        assert_eq!(p.for_model("gpt-4.1").unwrap().answer_tokens, 250);
    }

    #[test]
    fn an_estimate_names_whose_prices_it_used() {
        assert_eq!(
            priced_as("anthropic:claude-sonnet-4-5", "claude-sonnet-4-5"),
            "claude-sonnet-4-5"
        );
        assert_eq!(priced_as("openai:openai/GPT-4.1", "gpt-4.1"), "gpt-4.1");
        assert_eq!(
            priced_as("anthropic:claude-opus-4-1", "claude-opus-4"),
            "claude-opus-4-1 at claude-opus-4's prices (no entry of its own)"
        );
    }

    #[test]
    fn a_table_with_a_mistake_names_its_file_and_line() {
        let e = Prices::parse(
            "schema: sage.prices/1\nmodels:\n  - {model: m, input: 1, output: 2, context: 10, tokenizer: o200k_base}\n",
            "mine/prices.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("mine/prices.yaml:3") && e.contains("cached_input"),
            "{e}"
        );
        let e = Prices::parse("schema: sage.prices/2\nmodels: []\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sage.prices/1"), "{e}");
    }

    /// A call is made only when what is settled, what is in flight and its own projection
    /// stay within the limit; settling replaces the projection by the real cost.
    #[test]
    fn the_spend_stops_before_the_call_that_would_pass_the_limit() {
        let s = Spend::new(1.0);
        assert!(s.reserve(0.4).is_ok());
        assert!(s.reserve(0.4).is_ok());
        let why = s.reserve(0.3).unwrap_err();
        assert!(
            why.contains("($0.00 spent, $0.80 set aside for calls in flight, $0.20 left)"),
            "{why}"
        );
        // The first call came back cheaper than projected: room for the third.
        s.settle(0.4, 0.1);
        assert!(s.reserve(0.3).is_ok());
        s.settle(0.4, 0.4);
        s.settle(0.3, 0.3);
        assert!(
            s.said().contains("$0.80 of --max-cost $1.00"),
            "{}",
            s.said()
        );
        assert!(Spend::new(0.0).reserve(0.000_1).is_err());
    }

    #[test]
    fn amounts_keep_the_digits_that_matter() {
        for (v, want) in [
            (3.0, "3.00"),
            (0.075, "0.075"),
            (1.25, "1.25"),
            (0.0022, "0.0022"),
            (0.0, "0.00"),
            (12.345678, "12.346"),
        ] {
            assert_eq!(money(v), want, "{v}");
        }
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn tokens_are_counted_with_the_models_tokenizer() {
        // tiktoken's own counts for these strings.
        assert_eq!(Tokenizer::O200k.count("hello world"), 2);
        assert_eq!(Tokenizer::Cl100k.count("hello world"), 2);
        assert!(Tokenizer::O200k.count("def f(x):\n    return x\n") >= 6);
        assert_eq!(Tokenizer::O200k.count(""), 0);
    }

    /// Prefix prompts: each call after the first finds the one before it cached, once the
    /// shared part is long enough; answered prompts cost nothing and the sums add up.
    #[test]
    fn the_estimate_counts_what_would_be_sent_and_cached() {
        let prices = Prices::parse(
            "schema: sage.prices/1\nmodels:\n  - {model: m, input: 2, cached_input: 0.5, output: 8, context: 100000, tokenizer: o200k_base, min_cached_prefix: 1, answer_tokens: 100}\n",
            "p.yaml",
        )
        .unwrap();
        let spec = Spec::OpenAi {
            model: "m-1".into(),
        };
        let long = "word ".repeat(50);
        let p1 = prompt(&[&long, "turn one\n"], "score turn 1\n");
        let p2 = prompt(&[&long, "turn one\n", "turn two\n"], "score turn 2\n");
        let p3 = prompt(
            &[&long, "turn one\n", "turn two\n", "turn three\n"],
            "score turn 3\n",
        );
        let e = estimate(
            &spec,
            None,
            &[(&p1, false), (&p2, true), (&p3, false)],
            1,
            &prices,
        );
        assert_eq!((e.calls, e.cached_answers), (2, 1));
        let mut c = Counter::new(Tokenizer::O200k);
        let schema = serde_json::to_string(&super::super::answer::schema()).unwrap();
        let extra = overhead(c.part(&schema));
        let t1 = c.parts(&p1).iter().sum::<u64>() + extra;
        let t3 = c.parts(&p3).iter().sum::<u64>() + extra;
        assert_eq!(e.input_tokens, t1 + t3);
        // p3 follows p2 (answered, but sent before): system + three blocks shared.
        let shared: u64 = c.parts(&p3)[..4].iter().sum();
        assert_eq!(e.cached_input_tokens, shared);
        assert_eq!(e.output_tokens, 200);
        assert_eq!(e.largest_prompt_tokens, t3);
        let want = ((t1 + t3 - shared) as f64 * 2.0 + shared as f64 * 0.5 + 200.0 * 8.0) / 1e6;
        assert!((e.cost_usd.unwrap() - want).abs() < 1e-12);
        assert!(
            (e.batch_cost_usd.unwrap() - want).abs() < 1e-12,
            "no batch share set"
        );
        // A model without a price: tokens, no cost, and a warning saying so.
        let other = estimate(
            &Spec::OpenAi {
                model: "llama3".into(),
            },
            None,
            &[(&p1, false)],
            1,
            &prices,
        );
        assert!(other.cost_usd.is_none() && other.input_tokens > 0);
        assert!(
            other
                .warnings
                .iter()
                .any(|w| w.english().contains("no price"))
        );
    }
}

//! Styles mapped to data (seed 003's example 5, "colour nodes by their importance"): a layer's
//! colour or size follows one property of each element — a palette over its values
//! (categorical), or a gradient or size over a number's domain (linear, log or quantile).
//!
//! A layer keeps only what was asked ([`StyleMapping`]); the scale chosen when none was, the
//! domain, the categories and the legend are resolved from the data ([`resolve`]) each time the
//! data changes, so a reloaded file or a re-run algorithm is drawn as it is now. Colours are
//! taken at 256 steps along a gradient and sizes at three decimals, so the web view's distinct
//! styles stay few and the computed style of one element is exactly what is drawn.

use std::collections::HashMap;

use csscolorparser::Color;
use schemascope_core::path::{PropertyPath, Segment};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::color::normalize_color;
use crate::error::LayerError;
use crate::palette::{self, OTHER_COLOR};
use crate::style::{ElementKind, MAX_STYLE_MAGNITUDE};

/// What a mapping sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// The fill colour of a node, the line colour of an edge.
    Color,
    /// The size of a node, the line width of an edge.
    Size,
}

/// How values become positions along a palette or a size range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// One colour per value, most frequent first.
    Categorical,
    /// Position proportional to the value within the domain.
    Linear,
    /// Position proportional to the value's logarithm (positive values only).
    Log,
    /// Position is the value's rank among all values (even spread whatever the skew).
    Quantile,
}

impl Scale {
    fn name(self) -> &'static str {
        match self {
            Self::Categorical => "categorical",
            Self::Linear => "linear",
            Self::Log => "log",
            Self::Quantile => "quantile",
        }
    }
}

/// The palette a colour mapping asked for: a name, or colours of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PaletteChoice {
    /// A named palette (`viridis`, `okabe-ito`, …).
    Named(String),
    /// Colours given by the caller, as `#rrggbb`: categories take them in turn, a gradient runs
    /// through them.
    Colors(Vec<String>),
}

/// One mapping of a style rule, as asked (the property already resolved to its full path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StyleMapping {
    /// What it sets.
    pub channel: Channel,
    /// The property's dot path (`algorithmResults.schemascope.pagerank.rank`, `group`).
    pub property: String,
    /// The scale asked for; `None` lets the data choose (and the answer says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    /// The palette asked for (colour only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub palette: Option<PaletteChoice>,
    /// The numbers mapped to the ends, when not the data's minimum and maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<[f64; 2]>,
    /// The sizes (or edge widths) at the ends of the domain (size only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
}

/// The most colours a caller's own palette takes.
pub const MAX_PALETTE_COLORS: usize = 32;

/// The longest property path a mapping takes, in bytes.
pub const MAX_PROPERTY_BYTES: usize = 1000;

/// Sizes (node size multiplier) and widths when a size mapping gives no range.
const DEFAULT_SIZE_RANGE: [f64; 2] = [0.5, 3.0];
const DEFAULT_WIDTH_RANGE: [f64; 2] = [0.5, 5.0];

/// Integer values with at most this many distinct values are taken as categories.
const FEW_INTEGERS: usize = 12;

/// Name parts of a property whose integers are labels, not amounts (`community`, `group`).
const LABEL_WORDS: [&str; 9] = [
    "community",
    "component",
    "cluster",
    "group",
    "class",
    "category",
    "label",
    "partition",
    "type",
];

/// How far along a gradient colours are taken (256 steps).
const COLOR_STEPS: f64 = 255.0;

fn invalid(message: String) -> LayerError {
    LayerError::InvalidStyle(message)
}

fn pair(name: &str, key: &str, value: &Value) -> Result<[f64; 2], LayerError> {
    let numbers: Option<Vec<f64>> = value
        .as_array()
        .filter(|a| a.len() == 2)
        .map(|a| a.iter().filter_map(Value::as_f64).filter(|x| x.is_finite()).collect());
    match numbers.as_deref() {
        Some(&[lo, hi]) => Ok([lo, hi]),
        _ => Err(invalid(format!("`{name}.{key}` must be two numbers [low, high], not {value}"))),
    }
}

impl StyleMapping {
    /// A mapping as a tool takes it (`color_by` / `size_by`): a property path, or an object of
    /// `property`, `scale`, `palette`, `domain` and (size) `range`. Checked as far as it can be
    /// without the data.
    pub fn parse(channel: Channel, kind: ElementKind, given: &Value) -> Result<Self, LayerError> {
        let name = match channel {
            Channel::Color => "color_by",
            Channel::Size => "size_by",
        };
        let mut mapping = Self {
            channel,
            property: String::new(),
            scale: None,
            palette: None,
            domain: None,
            range: None,
        };
        match given {
            Value::String(property) => mapping.property = property.clone(),
            Value::Object(map) => {
                for (key, value) in map {
                    match key.as_str() {
                        "property" => {
                            mapping.property =
                                value.as_str().map(str::to_string).ok_or_else(|| {
                                    invalid(format!(
                                        "`{name}.property` must be a property path, not {value}"
                                    ))
                                })?;
                        }
                        "scale" => {
                            let scale = match value {
                                Value::Null => Ok(None),
                                Value::String(scale) => match scale.to_ascii_lowercase().as_str() {
                                    "auto" => Ok(None),
                                    "categorical" => Ok(Some(Scale::Categorical)),
                                    "linear" => Ok(Some(Scale::Linear)),
                                    "log" => Ok(Some(Scale::Log)),
                                    "quantile" => Ok(Some(Scale::Quantile)),
                                    _ => Err(()),
                                },
                                _ => Err(()),
                            };
                            mapping.scale = scale.map_err(|()| {
                                invalid(format!(
                                    "`{name}.scale` is one of categorical, linear, log, quantile or auto, not {value}"
                                ))
                            })?;
                        }
                        "palette" => {
                            mapping.palette = Some(match value {
                                Value::String(palette) => PaletteChoice::Named(palette.trim().to_ascii_lowercase()),
                                Value::Array(colors) => PaletteChoice::Colors(
                                    colors
                                        .iter()
                                        .map(|c| c.as_str().map_or_else(
                                            || Err(invalid(format!("`{name}.palette` colours are strings, not {c}"))),
                                            normalize_color,
                                        ))
                                        .collect::<Result<_, _>>()?,
                                ),
                                other => {
                                    return Err(invalid(format!(
                                        "`{name}.palette` is a palette name or a list of colours, not {other}"
                                    )));
                                }
                            });
                        }
                        "domain" => mapping.domain = Some(pair(name, key, value)?),
                        "range" => mapping.range = Some(pair(name, key, value)?),
                        other => {
                            let accepted = match channel {
                                Channel::Color => "property, scale, palette, domain",
                                Channel::Size => "property, scale, domain, range",
                            };
                            return Err(invalid(format!(
                                "`{name}` takes {accepted}; not `{}`",
                                other.chars().take(40).collect::<String>()
                            )));
                        }
                    }
                }
            }
            other => {
                return Err(invalid(format!(
                    "`{name}` is a property path (\"group\") or {{\"property\": …, \"scale\": …}}, not {other}"
                )));
            }
        }
        mapping.check(kind)?;
        Ok(mapping)
    }

    /// The checks that need no data: also what a layer read back from a session file must pass.
    pub fn check(&self, kind: ElementKind) -> Result<(), LayerError> {
        let name = self.parameter();
        let property = self.property.trim();
        if property.is_empty() {
            return Err(invalid(format!("`{name}` needs a property")));
        }
        if property.len() > MAX_PROPERTY_BYTES {
            return Err(invalid(format!(
                "`{name}`: a property path is at most {MAX_PROPERTY_BYTES} bytes"
            )));
        }
        let path: PropertyPath = property
            .parse()
            .map_err(|e| invalid(format!("`{name}`: `{property}` is not a property path: {e}")))?;
        if path.segments().contains(&Segment::Items) {
            return Err(invalid(format!(
                "`{name}`: `{property}` lies in an array, so an element has many values there; map a property with one value per {}",
                kind_noun(kind)
            )));
        }
        match (self.channel, self.scale) {
            (Channel::Size, Some(Scale::Categorical)) => {
                return Err(invalid(
                    "`size_by` maps numbers; a categorical scale is for colours (color_by)".into(),
                ));
            }
            (Channel::Size, _) if self.palette.is_some() => {
                return Err(invalid("`size_by` takes no palette; use `range`".into()));
            }
            (Channel::Color, _) if self.range.is_some() => {
                return Err(invalid(
                    "`color_by` takes no range (that is for size_by); give a `palette`".into(),
                ));
            }
            (_, Some(Scale::Categorical)) if self.domain.is_some() => {
                return Err(invalid(format!("`{name}`: a categorical scale takes no domain")));
            }
            (_, Some(Scale::Quantile)) if self.domain.is_some() => {
                return Err(invalid(format!(
                    "`{name}`: a quantile scale places values by their rank, so it takes no domain; use \"linear\" or \"log\" with a domain"
                )));
            }
            _ => {}
        }
        if let Some([lo, hi]) = self.domain {
            if lo >= hi {
                return Err(invalid(format!(
                    "`{name}.domain` must be [low, high] with low below high, not [{}, {}]",
                    short(lo),
                    short(hi)
                )));
            }
            if self.scale == Some(Scale::Log) && lo <= 0.0 {
                return Err(invalid(format!(
                    "`{name}`: a log scale needs a positive domain, not [{}, {}]",
                    short(lo),
                    short(hi)
                )));
            }
        }
        if let Some([lo, hi]) = self.range
            && !(lo > 0.0 && hi > 0.0 && lo <= MAX_STYLE_MAGNITUDE && hi <= MAX_STYLE_MAGNITUDE)
        {
            return Err(invalid(format!(
                "`size_by.range` sizes are above 0 and at most {MAX_STYLE_MAGNITUDE}, not [{}, {}]",
                short(lo),
                short(hi)
            )));
        }
        match &self.palette {
            Some(PaletteChoice::Named(palette)) => {
                let (categorical, sequential) =
                    (palette::categorical(palette), palette::sequential(palette));
                let names = || {
                    palette::CATEGORICAL
                        .iter()
                        .map(|p| p.name)
                        .chain(palette::SEQUENTIAL.iter().map(|p| p.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                match (categorical, sequential, self.scale) {
                    (None, None, _) => {
                        return Err(invalid(format!(
                            "`color_by.palette`: no palette `{}`; the palettes: {}, or a list of colours",
                            palette.chars().take(40).collect::<String>(),
                            names()
                        )));
                    }
                    (Some(p), _, Some(Scale::Linear | Scale::Log | Scale::Quantile)) => {
                        return Err(invalid(format!(
                            "`color_by.palette`: `{}` is a palette of categories; a gradient takes one of {}",
                            p.name,
                            palette::SEQUENTIAL
                                .iter()
                                .map(|p| p.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                    }
                    (_, Some(p), Some(Scale::Categorical)) => {
                        return Err(invalid(format!(
                            "`color_by.palette`: `{}` is a gradient; categories take one of {}",
                            p.name,
                            palette::CATEGORICAL
                                .iter()
                                .map(|p| p.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                    }
                    _ => {}
                }
            }
            Some(PaletteChoice::Colors(colors)) => {
                if colors.len() < 2 || colors.len() > MAX_PALETTE_COLORS {
                    return Err(invalid(format!(
                        "`color_by.palette` takes 2 to {MAX_PALETTE_COLORS} colours, not {}",
                        colors.len()
                    )));
                }
                for color in colors {
                    if normalize_color(color).as_deref() != Ok(color.as_str()) {
                        return Err(invalid(format!(
                            "`color_by.palette`: `{}` is not a colour as `#rrggbb`",
                            color.chars().take(40).collect::<String>()
                        )));
                    }
                }
            }
            None => {}
        }
        Ok(())
    }

    /// The parameter it came from.
    pub fn parameter(&self) -> &'static str {
        match self.channel {
            Channel::Color => "color_by",
            Channel::Size => "size_by",
        }
    }

    /// The nested style path it sets for `kind` (`texture.color`, `line.width`).
    pub fn style_path(&self, kind: ElementKind) -> &'static str {
        match (kind, self.channel) {
            (ElementKind::Node, Channel::Color) => "texture.color",
            (ElementKind::Node, Channel::Size) => "shape.size",
            (ElementKind::Edge, Channel::Color) => "line.color",
            (ElementKind::Edge, Channel::Size) => "line.width",
        }
    }

    /// A short phrase for layer summaries: `Node color by `group` (categorical)`.
    pub fn phrase(&self, kind: ElementKind) -> String {
        let what = match (kind, self.channel) {
            (ElementKind::Node, Channel::Color) => "Node color",
            (ElementKind::Node, Channel::Size) => "Node size",
            (ElementKind::Edge, Channel::Color) => "Edge color",
            (ElementKind::Edge, Channel::Size) => "Edge width",
        };
        let scale = self.scale.map_or("scale chosen from the data", Scale::name);
        format!("{what} by `{}` ({scale})", self.property)
    }
}

fn kind_noun(kind: ElementKind) -> &'static str {
    match kind {
        ElementKind::Node => "node",
        ElementKind::Edge => "edge",
    }
}

/// The value at `path` in an element's data, if it is a scalar a mapping reads (a string, a
/// number or a boolean).
pub fn value_at<'v>(data: &'v Value, path: &PropertyPath) -> Option<&'v Value> {
    let mut at = data;
    for segment in path.segments() {
        match segment {
            Segment::Key(key) => at = at.as_object()?.get(&**key)?,
            Segment::Items => return None,
        }
    }
    matches!(at, Value::String(_) | Value::Number(_) | Value::Bool(_)).then_some(at)
}

/// The key a category is counted under: the same value whatever its JSON spelling.
fn category_key(value: &Value) -> String {
    match value {
        Value::String(s) => format!("s{s}"),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => format!("n{}", x as i64),
            _ => format!("n{n}"),
        },
        other => format!("b{other}"),
    }
}

/// One category of a categorical mapping.
#[derive(Debug, Clone, PartialEq)]
struct Category {
    value: Value,
    color: String,
    count: usize,
}

/// The categories past the palette's colours, drawn in [`OTHER_COLOR`].
#[derive(Debug, Clone, PartialEq)]
struct Other {
    values: usize,
    count: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Categories {
        palette: String,
        colorblind_safe: bool,
        entries: Vec<Category>,
        index: HashMap<String, usize>,
        other: Option<Other>,
    },
    Numbers {
        domain: [f64; 2],
        /// Every value, sorted (the quantile scale's ranks, the legend's quantiles).
        sorted: Vec<f64>,
        /// The gradient (colour) and its name or colours.
        stops: Vec<Color>,
        palette: Value,
        /// The sizes at the ends (size).
        range: [f64; 2],
    },
}

/// A mapping resolved against the data: the scale, domain or categories, and the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    mapping: StyleMapping,
    kind: ElementKind,
    scale: Scale,
    /// Why the scale was chosen, when the caller left it to the data.
    chose: Option<String>,
    mode: Mode,
    with_value: usize,
    without_value: usize,
    /// Values outside a domain the caller gave, drawn at its ends.
    clamped: usize,
}

/// Resolves `mapping` over the values of every element of `kind` (`None` where an element has
/// no scalar value there). An error says what is wrong with the mapping for this data.
pub fn resolve(
    mapping: &StyleMapping,
    kind: ElementKind,
    values: &[Option<&Value>],
) -> Result<Resolved, LayerError> {
    let name = mapping.parameter();
    let noun = kind_noun(kind);
    let present: Vec<&Value> = values.iter().flatten().copied().collect();
    // The numbers, sorted once: the scale's choice, the domain, quantiles and the legend read them.
    let mut sorted: Vec<f64> =
        present.iter().filter_map(|v| v.as_f64()).filter(|x| x.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let property = &mapping.property;
    if present.is_empty() {
        return Err(invalid(format!(
            "`{name}`: no {noun} has a value at `{property}` (nulls, objects and arrays are not mapped), so there is no domain to map"
        )));
    }
    let examples = || {
        let mut seen = Vec::new();
        for v in present.iter().filter(|v| !v.is_number()) {
            let text = v.to_string();
            if !seen.contains(&text) {
                seen.push(text);
            }
            if seen.len() == 3 {
                break;
            }
        }
        seen.join(", ")
    };
    let (scale, chose) = match mapping.scale {
        Some(scale) => (scale, None),
        None => choose_scale(mapping, &present, &sorted),
    };
    if scale == Scale::Categorical && mapping.domain.is_some() {
        return Err(invalid(format!(
            "`{name}`: `{property}` is mapped as categories ({}), which take no domain; give \"scale\": \"linear\" to use it",
            chose.as_deref().unwrap_or("categorical")
        )));
    }

    if (scale != Scale::Categorical || mapping.channel == Channel::Size) && sorted.is_empty() {
        return Err(invalid(format!(
            "`{name}`: `{property}` holds no numbers (values such as {}); {} needs numbers{}",
            examples(),
            if mapping.channel == Channel::Size { "a size" } else { "a gradient" },
            match (&mapping.channel, &mapping.palette) {
                (Channel::Size, _) => String::new(),
                (Channel::Color, Some(PaletteChoice::Named(_))) => format!(
                    ": use \"scale\": \"categorical\" with a palette of categories ({}) or none",
                    palette::CATEGORICAL.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                ),
                (Channel::Color, _) => ": use \"scale\": \"categorical\"".to_string(),
            }
        )));
    }
    let mode = if scale == Scale::Categorical {
        categories(mapping, &present)?
    } else {
        let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
        if scale == Scale::Log && mapping.domain.is_none() && lo <= 0.0 {
            let at_most_zero = sorted.iter().filter(|x| **x <= 0.0).count();
            return Err(invalid(format!(
                "`{name}`: a log scale needs positive numbers, and {at_most_zero} {noun}(s) have `{property}` ≤ 0 (the least is {}); use \"scale\": \"linear\" or \"quantile\"",
                short(lo)
            )));
        }
        let domain = mapping.domain.unwrap_or([lo, hi]);
        let (stops, palette) = gradient_of(mapping);
        let range = mapping.range.unwrap_or(match kind {
            ElementKind::Node => DEFAULT_SIZE_RANGE,
            ElementKind::Edge => DEFAULT_WIDTH_RANGE,
        });
        Mode::Numbers { domain, sorted, stops, palette, range }
    };
    let mut resolved = Resolved {
        mapping: mapping.clone(),
        kind,
        scale,
        chose,
        mode,
        with_value: 0,
        without_value: 0,
        clamped: 0,
    };
    for value in values {
        match value.and_then(|v| resolved.position(v)) {
            Some(_) => resolved.with_value += 1,
            None => resolved.without_value += 1,
        }
    }
    if let Mode::Numbers { domain: [lo, hi], sorted, .. } = &resolved.mode
        && mapping.domain.is_some()
    {
        resolved.clamped = sorted.iter().filter(|x| **x < *lo || **x > *hi).count();
    }
    Ok(resolved)
}

/// The scale the data suggests, and why, when the caller gave none; `sorted` are the present
/// values' numbers in order.
fn choose_scale(
    mapping: &StyleMapping,
    present: &[&Value],
    sorted: &[f64],
) -> (Scale, Option<String>) {
    let property = &mapping.property;
    // A named palette says which the caller wants: its kind decides (`check` made sure it is one
    // of the two), and the data only which gradient scale.
    if let Some(PaletteChoice::Named(named)) = &mapping.palette {
        if let Some(p) = palette::categorical(named) {
            return (Scale::Categorical, Some(format!("`{}` is a palette of categories", p.name)));
        }
        if sorted.is_empty() {
            // No numbers: `resolve` says a gradient needs them.
            return (Scale::Linear, None);
        }
        return number_scale(mapping, sorted);
    }
    if sorted.is_empty() {
        // Categories for colours; a size has nothing to map, which `resolve` says.
        return (Scale::Categorical, Some(format!("`{property}` holds text or true/false")));
    }
    if sorted.len() < present.len() && mapping.channel == Channel::Color {
        return (Scale::Categorical, Some(format!("`{property}` holds text or true/false")));
    }
    if mapping.channel == Channel::Color && sorted.iter().all(|x| x.fract() == 0.0) {
        let last = property.rsplit('.').next().unwrap_or(property).to_ascii_lowercase();
        if let Some(word) = LABEL_WORDS.iter().find(|w| last.contains(**w)) {
            return (
                Scale::Categorical,
                Some(format!("`{property}` holds whole numbers and its name says {word}")),
            );
        }
        let distinct = 1 + sorted.windows(2).filter(|w| w[0] != w[1]).count();
        if distinct <= FEW_INTEGERS {
            return (
                Scale::Categorical,
                Some(format!("`{property}` holds only {distinct} distinct whole numbers")),
            );
        }
    }
    number_scale(mapping, sorted)
}

/// The gradient scale for `sorted` (not empty), and why: linear when the median lies in the
/// middle half of the range, else log when every value is positive, else quantile.
fn number_scale(mapping: &StyleMapping, sorted: &[f64]) -> (Scale, Option<String>) {
    let (lo, hi) =
        mapping.domain.map_or((sorted[0], sorted[sorted.len() - 1]), |[lo, hi]| (lo, hi));
    if hi <= lo {
        return (Scale::Linear, Some("every value is the same".into()));
    }
    let median = sorted[(sorted.len() - 1) / 2];
    let at = (median - lo) / (hi - lo);
    let percent = (at * 100.0).round();
    // A median in the middle half spreads the colours well enough; past it, most elements
    // would share the few colours at one end (an exponential-like spread puts its median at
    // about a sixth of the range).
    if (0.25..=0.75).contains(&at) {
        (Scale::Linear, Some(format!("the median lies at {percent}% of the range")))
    } else if mapping.domain.is_some() && lo <= 0.0 {
        // A quantile scale would ignore the domain given.
        (Scale::Linear, Some(format!("a domain was given (the median lies at {percent}% of it)")))
    } else if lo > 0.0 {
        (
            Scale::Log,
            Some(format!(
                "the values are skewed (the median lies at {percent}% of the range) and all positive"
            )),
        )
    } else {
        (
            Scale::Quantile,
            Some(format!(
                "the values are skewed (the median lies at {percent}% of the range) and some are not positive"
            )),
        )
    }
}

/// The categories of the present values, most frequent first (ties by value), each with its
/// colour; those past the palette share [`OTHER_COLOR`].
fn categories(mapping: &StyleMapping, present: &[&Value]) -> Result<Mode, LayerError> {
    let mut counts: HashMap<String, (Value, usize)> = HashMap::new();
    for value in present {
        counts.entry(category_key(value)).or_insert_with(|| ((*value).clone(), 0)).1 += 1;
    }
    let mut ordered: Vec<(String, Value, usize)> =
        counts.into_iter().map(|(key, (value, count))| (key, value, count)).collect();
    ordered.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let (name, colors, safe): (String, Vec<String>, bool) = match &mapping.palette {
        Some(PaletteChoice::Colors(colors)) => ("custom".into(), colors.clone(), false),
        Some(PaletteChoice::Named(named)) => {
            let p = palette::categorical(named).ok_or_else(|| {
                invalid(format!("`color_by.palette`: `{named}` is not a palette of categories"))
            })?;
            (p.name.into(), p.colors.iter().map(|c| c.to_string()).collect(), p.colorblind_safe)
        }
        None => {
            let p = palette::categorical_for(ordered.len());
            (p.name.into(), p.colors.iter().map(|c| c.to_string()).collect(), p.colorblind_safe)
        }
    };
    let mut entries = Vec::new();
    let mut index = HashMap::new();
    let mut other: Option<Other> = None;
    for (key, value, count) in ordered {
        match colors.get(entries.len()) {
            Some(color) if other.is_none() => {
                index.insert(key, entries.len());
                entries.push(Category { value, color: color.clone(), count });
            }
            _ => {
                let o = other.get_or_insert(Other { values: 0, count: 0 });
                o.values += 1;
                o.count += count;
            }
        }
    }
    Ok(Mode::Categories { palette: name, colorblind_safe: safe, entries, index, other })
}

/// The gradient stops and how to name them.
fn gradient_of(mapping: &StyleMapping) -> (Vec<Color>, Value) {
    match &mapping.palette {
        Some(PaletteChoice::Colors(colors)) => (palette::parse_stops(colors), json!(colors)),
        Some(PaletteChoice::Named(named)) => {
            let p = palette::sequential(named).unwrap_or(palette::VIRIDIS);
            (palette::parse_stops(p.stops), json!(p.name))
        }
        None => (palette::parse_stops(palette::VIRIDIS.stops), json!(palette::VIRIDIS.name)),
    }
}

/// `x` to four significant digits, for messages (the data keeps every digit).
fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor();
    if !(-6.0..15.0).contains(&magnitude) {
        return format!("{x:.3e}");
    }
    let decimals = (3.0 - magnitude).max(0.0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Resolved {
    /// The mapping as asked.
    pub fn mapping(&self) -> &StyleMapping {
        &self.mapping
    }

    /// Where `value` lies along the scale (0 to 1; the category's index for categories), or
    /// `None` when it has no place there (text on a gradient, a non-positive number on a log
    /// scale).
    fn position(&self, value: &Value) -> Option<f64> {
        match &self.mode {
            Mode::Categories { index, other, .. } => {
                match index.get(&category_key(value)) {
                    Some(&i) => Some(i as f64),
                    // Every present value was counted: one not indexed is among the others.
                    None => other.as_ref().map(|_| -1.0),
                }
            }
            Mode::Numbers { domain: [lo, hi], sorted, .. } => {
                let x = value.as_f64().filter(|x| x.is_finite())?;
                let t = match self.scale {
                    Scale::Log => {
                        if x <= 0.0 {
                            return None;
                        }
                        (x.ln() - lo.ln()) / (hi.ln() - lo.ln())
                    }
                    Scale::Quantile => {
                        let below = sorted.partition_point(|v| *v < x);
                        let through = sorted.partition_point(|v| *v <= x);
                        let n = sorted.len();
                        if n <= 1 {
                            0.5
                        } else {
                            // The middle of the ranks the value holds: ties share one place.
                            (below + through.max(below + 1) - 1) as f64 / 2.0 / (n - 1) as f64
                        }
                    }
                    _ => (x - lo) / (hi - lo),
                };
                Some(if hi > lo || self.scale == Scale::Quantile { t.clamp(0.0, 1.0) } else { 0.5 })
            }
        }
    }

    /// What the mapping sets for an element whose value is `value`: a colour (`#rrggbb`) or a
    /// size; `None` when it sets nothing (the element keeps what lower layers give it).
    pub fn output(&self, value: Option<&Value>) -> Option<Value> {
        let t = self.position(value?)?;
        Some(match &self.mode {
            Mode::Categories { entries, .. } => {
                let color = usize::try_from(t as i64)
                    .ok()
                    .and_then(|i| entries.get(i))
                    .map_or(OTHER_COLOR, |c| c.color.as_str());
                json!(color)
            }
            Mode::Numbers { stops, range: [a, b], .. } => match self.mapping.channel {
                Channel::Color => {
                    json!(palette::gradient_color(stops, (t * COLOR_STEPS).round() / COLOR_STEPS))
                }
                Channel::Size => json!(round3(a + t * (b - a))),
            },
        })
    }

    /// The value at position `t` of a numeric scale (the legend's stops).
    fn value_at_position(&self, t: f64) -> Option<f64> {
        let Mode::Numbers { domain: [lo, hi], sorted, .. } = &self.mode else { return None };
        Some(match self.scale {
            Scale::Log => (lo.ln() + t * (hi.ln() - lo.ln())).exp(),
            Scale::Quantile => {
                let i = (t * (sorted.len() - 1) as f64).round() as usize;
                *sorted.get(i)?
            }
            _ => lo + t * (hi - lo),
        })
    }

    /// The legend: what each colour or size means.
    pub fn legend(&self) -> Value {
        let mut legend = Map::new();
        legend.insert("property".into(), json!(self.mapping.property));
        legend.insert("channel".into(), json!(self.mapping.channel));
        legend.insert("scale".into(), json!(self.scale.name()));
        match &self.mode {
            Mode::Categories { palette, colorblind_safe, entries, other, .. } => {
                legend.insert("palette".into(), json!(palette));
                legend.insert("colorblindSafe".into(), json!(colorblind_safe));
                legend.insert(
                    "entries".into(),
                    entries
                        .iter()
                        .map(|c| json!({"value": c.value, "color": c.color, "count": c.count}))
                        .collect(),
                );
                if let Some(o) = other {
                    legend.insert(
                        "other".into(),
                        json!({"color": OTHER_COLOR, "values": o.values, "count": o.count}),
                    );
                }
            }
            Mode::Numbers { domain, palette, range, .. } => {
                legend.insert("domain".into(), json!(domain));
                let ts: &[f64] = match self.mapping.channel {
                    Channel::Color => &[0.0, 0.25, 0.5, 0.75, 1.0],
                    Channel::Size => &[0.0, 0.5, 1.0],
                };
                let key = match (self.mapping.channel, self.kind) {
                    (Channel::Color, _) => "color",
                    (Channel::Size, ElementKind::Node) => "size",
                    (Channel::Size, ElementKind::Edge) => "width",
                };
                let stops: Vec<Value> = ts
                    .iter()
                    .filter_map(|&t| {
                        let value = self.value_at_position(t)?;
                        let out = self.output(Some(&json!(value)))?;
                        Some(json!({"value": schemascope_core::figure::stat_json(value), key: out}))
                    })
                    .collect();
                match self.mapping.channel {
                    Channel::Color => {
                        legend.insert("palette".into(), palette.clone());
                        legend.insert(
                            "colorblindSafe".into(),
                            json!(palette.as_str().is_some_and(|p| p != "custom")),
                        );
                    }
                    Channel::Size => {
                        legend.insert("range".into(), json!(range));
                    }
                }
                legend.insert("stops".into(), json!(stops));
            }
        }
        if let Some(why) = &self.chose {
            legend.insert("scaleChosenBecause".into(), json!(why));
        }
        legend.insert("withValue".into(), json!(self.with_value));
        legend.insert("withoutValue".into(), json!(self.without_value));
        if self.clamped > 0 {
            legend.insert("outsideDomain".into(), json!(self.clamped));
        }
        Value::Object(legend)
    }

    /// A sentence for a tool's message: the scale and why, and what is not mapped — which
    /// keeps the style of lower layers, or takes `fallback` (the layer's own fixed value of the
    /// channel, e.g. `color` beside `color_by`) when there is one.
    pub fn sentence(&self, fallback: Option<&Value>) -> String {
        let noun = kind_noun(self.kind);
        let mut out = format!(
            " {} by `{}`: {} scale",
            match self.mapping.channel {
                Channel::Color => "Coloured",
                Channel::Size if self.kind == ElementKind::Edge => "Widths",
                Channel::Size => "Sized",
            },
            self.mapping.property,
            self.scale.name()
        );
        if let Some(why) = &self.chose {
            out.push_str(&format!(" (chosen: {why}; pass \"scale\" to change it)"));
        }
        match &self.mode {
            Mode::Categories { palette, colorblind_safe, entries, other, .. } => {
                out.push_str(&format!(", {} value(s) in palette {palette}", entries.len()));
                if let Some(o) = other {
                    out.push_str(&format!(
                        "; {} more value(s) ({} {noun}s) share the colour {OTHER_COLOR} (\"other\")",
                        o.values, o.count
                    ));
                }
                if !colorblind_safe {
                    out.push_str("; this palette is not safe for colour-blind readers");
                }
            }
            Mode::Numbers { domain: [lo, hi], .. } => {
                out.push_str(&format!(", domain {} to {}", short(*lo), short(*hi)));
            }
        }
        out.push('.');
        if self.without_value > 0 {
            let then = match fallback {
                Some(value) => format!(
                    "take this layer's {} {}",
                    self.mapping.style_path(self.kind).rsplit('.').next().unwrap_or_default(),
                    value.as_str().map_or_else(|| value.to_string(), str::to_string)
                ),
                None => "keep the style of lower layers".to_string(),
            };
            out.push_str(&format!(
                " {} {noun}(s) have no {} there and {then}.",
                self.without_value,
                if self.scale == Scale::Categorical { "value" } else { "usable number" }
            ));
        }
        if self.clamped > 0 {
            out.push_str(&format!(
                " {} value(s) lie outside the domain and are drawn at its ends.",
                self.clamped
            ));
        }
        out
    }

    /// Why an element's value gave what it did (`describe_styles` `compute_for`).
    pub fn explain(&self, value: Option<&Value>) -> Value {
        let out = self.output(value);
        let mut explained = Map::new();
        explained.insert("field".into(), json!(self.mapping.style_path(self.kind)));
        explained.insert("property".into(), json!(self.mapping.property));
        explained.insert("value".into(), value.cloned().unwrap_or(Value::Null));
        explained.insert("scale".into(), json!(self.scale.name()));
        if self.scale != Scale::Categorical
            && let Some(t) = value.and_then(|v| self.position(v))
        {
            explained.insert("position".into(), json!(round3(t)));
        }
        match out {
            Some(out) => {
                explained.insert("result".into(), out);
            }
            None => {
                explained.insert("result".into(), Value::Null);
                explained.insert(
                    "note".into(),
                    json!("no mappable value here: this layer sets nothing for this field"),
                );
            }
        }
        Value::Object(explained)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(channel: Channel, given: Value) -> StyleMapping {
        StyleMapping::parse(channel, ElementKind::Node, &given).expect("valid mapping")
    }

    fn resolved(m: &StyleMapping, values: &[Value]) -> Resolved {
        let refs: Vec<Option<&Value>> =
            values.iter().map(|v| (!v.is_null()).then_some(v)).collect();
        resolve(m, ElementKind::Node, &refs).expect("resolves")
    }

    #[test]
    fn text_gets_categories_most_frequent_first_and_past_the_palette_other() {
        let m = mapping(Channel::Color, json!("group"));
        let values: Vec<Value> = ["b", "a", "a", "c", "b", "a"].iter().map(|s| json!(s)).collect();
        let r = resolved(&m, &values);
        let legend = r.legend();
        assert_eq!(legend["scale"], "categorical");
        assert_eq!(legend["palette"], "okabe-ito");
        assert_eq!(
            legend["entries"],
            json!([{"value": "a", "color": "#e69f00", "count": 3}, {"value": "b", "color": "#56b4e9", "count": 2}, {"value": "c", "color": "#009e73", "count": 1}])
        );
        assert_eq!(r.output(Some(&json!("b"))), Some(json!("#56b4e9")));
        assert_eq!(r.output(None), None);
        // Two colours of one's own: the third value is "other".
        let two = mapping(Channel::Color, json!({"property": "group", "palette": ["red", "#00f"]}));
        let r = resolved(&two, &values);
        assert_eq!(r.output(Some(&json!("c"))), Some(json!(OTHER_COLOR)));
        assert_eq!(r.legend()["other"], json!({"color": OTHER_COLOR, "values": 1, "count": 1}));
        assert!(
            r.sentence(None).contains("1 more value(s) (1 nodes) share"),
            "{}",
            r.sentence(None)
        );
    }

    #[test]
    fn integers_named_as_labels_or_few_are_categories_and_many_numbers_a_gradient() {
        let community: Vec<Value> = (0..40).map(|i| json!(i % 20)).collect();
        let m = mapping(Channel::Color, json!("algorithmResults.schemascope.louvain.community"));
        let r = resolved(&m, &community);
        assert_eq!(r.legend()["scale"], "categorical");
        assert_eq!(
            r.legend()["palette"],
            "kelly",
            "20 values: past the colour-blind-safe palettes"
        );
        assert_eq!(r.legend()["other"]["values"], 1);
        let few: Vec<Value> = (0..40).map(|i| json!(i % 4)).collect();
        assert_eq!(
            resolved(&mapping(Channel::Color, json!("x")), &few).legend()["scale"],
            "categorical"
        );
        let even: Vec<Value> = (0..101).map(|i| json!(i)).collect();
        let r = resolved(&mapping(Channel::Color, json!("x")), &even);
        assert_eq!(r.legend()["scale"], "linear");
        assert_eq!(r.output(Some(&json!(0))), Some(json!("#440154")));
        assert_eq!(r.output(Some(&json!(100))), Some(json!("#fde725")));
        assert_eq!(r.legend()["stops"][2]["value"], json!(50.0));
    }

    #[test]
    fn a_named_palette_without_a_scale_decides_categories_or_gradient() {
        // Many distinct numbers would get a gradient; a palette of categories asks for those.
        let even: Vec<Value> = (0..30).map(|i| json!(i * 7)).collect();
        let r = resolved(
            &mapping(Channel::Color, json!({"property": "x", "palette": "tableau10"})),
            &even,
        );
        assert_eq!(r.legend()["scale"], "categorical");
        assert_eq!(r.legend()["palette"], "tableau10");
        assert!(
            r.legend()["scaleChosenBecause"].as_str().unwrap_or_default().contains("tableau10"),
            "{}",
            r.legend()
        );
        // A community id would get categories; a gradient palette asks for a gradient.
        let community: Vec<Value> = (0..40).map(|i| json!(i % 20)).collect();
        let m =
            mapping(Channel::Color, json!({"property": "louvain.community", "palette": "magma"}));
        let r = resolved(&m, &community);
        assert_eq!(r.legend()["scale"], "linear");
        assert_eq!(r.legend()["palette"], "magma");
        // Text cannot take a gradient: refused, not drawn in another palette.
        let text: Vec<Value> = ["a", "b"].iter().map(|s| json!(s)).collect();
        let m = mapping(Channel::Color, json!({"property": "group", "palette": "viridis"}));
        let refs: Vec<Option<&Value>> = text.iter().map(Some).collect();
        let error = resolve(&m, ElementKind::Node, &refs).expect_err("text takes no gradient");
        assert!(error.to_string().contains("categorical"), "{error}");
    }

    #[test]
    fn skewed_positive_numbers_get_a_log_scale_and_with_zeros_a_quantile_one() {
        let skewed: Vec<Value> =
            (1..=100).map(|i| json!(if i == 100 { 1000.0 } else { i as f64 / 10.0 })).collect();
        let r = resolved(&mapping(Channel::Color, json!("rank")), &skewed);
        assert_eq!(r.legend()["scale"], "log");
        assert!(r.legend()["scaleChosenBecause"].as_str().unwrap_or_default().contains("skewed"));
        let stops = r.legend()["stops"].clone();
        assert_eq!(stops[0]["value"], json!(0.1));
        assert_eq!(stops[4]["value"], json!(1000.0));
        assert_eq!(stops[2]["value"], json!(10.0), "the middle of 0.1–1000 in logs");
        let with_zero: Vec<Value> =
            (0..100).map(|i| json!(if i == 99 { 1000.0 } else { i as f64 / 10.0 })).collect();
        let r = resolved(&mapping(Channel::Color, json!("rank")), &with_zero);
        assert_eq!(r.legend()["scale"], "quantile");
        assert_eq!(r.output(Some(&json!(0.0))), Some(json!("#440154")));
        assert_eq!(r.output(Some(&json!(1000.0))), Some(json!("#fde725")));
        let err = resolve(
            &mapping(Channel::Color, json!({"property": "rank", "scale": "log"})),
            ElementKind::Node,
            &with_zero.iter().map(Some).collect::<Vec<_>>(),
        )
        .expect_err("log over a zero");
        assert!(err.to_string().contains("1 node(s) have `rank` ≤ 0"), "{err}");
    }

    #[test]
    fn quantile_positions_are_mid_ranks_with_ties_sharing_one() {
        let m =
            mapping(Channel::Size, json!({"property": "x", "scale": "quantile", "range": [1, 5]}));
        let values = [json!(10), json!(20), json!(20), json!(30), json!(40)];
        let r = resolved(&m, &values);
        assert_eq!(r.output(Some(&json!(10))), Some(json!(1.0)));
        assert_eq!(r.output(Some(&json!(20))), Some(json!(2.5)), "ranks 1 and 2 of 0–4");
        assert_eq!(r.output(Some(&json!(40))), Some(json!(5.0)));
        assert_eq!(r.legend()["range"], json!([1.0, 5.0]));
    }

    #[test]
    fn a_given_domain_clamps_and_is_counted() {
        let m =
            mapping(Channel::Size, json!({"property": "x", "domain": [0, 10], "scale": "linear"}));
        let values = [json!(-5), json!(5), json!(50), json!("n/a")];
        let r = resolved(&m, &values);
        assert_eq!(r.output(Some(&json!(-5))), Some(json!(0.5)));
        assert_eq!(r.output(Some(&json!(5))), Some(json!(1.75)));
        assert_eq!(r.output(Some(&json!(50))), Some(json!(3.0)));
        assert_eq!(r.output(Some(&json!("n/a"))), None, "text has no size");
        assert_eq!(r.legend()["outsideDomain"], 2);
        assert_eq!(r.legend()["withoutValue"], 1);
        assert!(
            r.sentence(None).contains("2 value(s) lie outside the domain"),
            "{}",
            r.sentence(None)
        );
    }

    #[test]
    fn bad_mappings_are_refused_with_what_to_do() {
        let refused = |channel, given: Value| {
            StyleMapping::parse(channel, ElementKind::Node, &given)
                .expect_err("refused")
                .to_string()
        };
        assert!(
            refused(Channel::Size, json!({"property": "x", "scale": "categorical"}))
                .contains("color_by")
        );
        assert!(
            refused(Channel::Color, json!({"property": "x", "range": [1, 2]})).contains("size_by")
        );
        assert!(
            refused(Channel::Color, json!({"property": "x", "palette": "rainbow"}))
                .contains("viridis")
        );
        assert!(
            refused(
                Channel::Color,
                json!({"property": "x", "palette": "viridis", "scale": "categorical"})
            )
            .contains("is a gradient")
        );
        assert!(
            refused(Channel::Color, json!({"property": "x", "palette": ["red"]}))
                .contains("2 to 32")
        );
        assert!(
            refused(Channel::Color, json!({"property": "x", "domain": [3, 3]}))
                .contains("low below high")
        );
        assert!(
            refused(Channel::Size, json!({"property": "x", "range": [0, 200]})).contains("above 0")
        );
        assert!(refused(Channel::Color, json!({"property": "tags[]"})).contains("array"));
        assert!(
            refused(Channel::Color, json!({"property": "x", "colour": "red"}))
                .contains("not `colour`")
        );
        assert!(refused(Channel::Color, json!(3)).contains("property path"));
        assert!(refused(Channel::Color, json!("")).contains("needs a property"));
        let text = [json!("a"), json!("b")];
        let refs: Vec<Option<&Value>> = text.iter().map(Some).collect();
        let gradient = mapping(Channel::Color, json!({"property": "name", "scale": "linear"}));
        let err = resolve(&gradient, ElementKind::Node, &refs).expect_err("text on a gradient");
        assert!(
            err.to_string().contains("holds no numbers") && err.to_string().contains("categorical"),
            "{err}"
        );
        let none: Vec<Option<&Value>> = vec![None, None];
        let err = resolve(&gradient, ElementKind::Node, &none).expect_err("empty domain");
        assert!(err.to_string().contains("no node has a value"), "{err}");
    }

    #[test]
    fn explain_says_which_value_gave_which_colour() {
        let m = mapping(Channel::Color, json!({"property": "x", "scale": "linear"}));
        let values = [json!(0), json!(10)];
        let r = resolved(&m, &values);
        let explained = r.explain(Some(&json!(10)));
        assert_eq!(explained["result"], "#fde725");
        assert_eq!(explained["position"], json!(1.0));
        assert_eq!(explained["field"], "texture.color");
        assert_eq!(r.explain(None)["result"], Value::Null);
    }

    #[test]
    fn sizes_of_text_are_refused_and_messages_keep_four_digits() {
        let text = [json!("a"), json!("b")];
        let refs: Vec<Option<&Value>> = text.iter().map(Some).collect();
        let err = resolve(&mapping(Channel::Size, json!("name")), ElementKind::Node, &refs)
            .expect_err("a size of text");
        assert!(err.to_string().contains("a size needs numbers"), "{err}");
        assert_eq!(short(0.0032984199979), "0.003298");
        assert_eq!(short(1234.5678), "1235");
        assert_eq!(short(-2.5), "-2.5");
        assert_eq!(short(1e-9), "1.000e-9");
    }

    #[test]
    fn value_at_reads_scalars_only() {
        let data = json!({"a": {"b": 2}, "list": [1], "n": null});
        let path = |p: &str| p.parse::<PropertyPath>().expect("path");
        assert_eq!(value_at(&data, &path("a.b")), Some(&json!(2)));
        assert_eq!(value_at(&data, &path("a")), None);
        assert_eq!(value_at(&data, &path("list")), None);
        assert_eq!(value_at(&data, &path("n")), None);
        assert_eq!(value_at(&data, &path("missing")), None);
    }
}

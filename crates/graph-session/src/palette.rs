//! The named palettes a mapped style takes: categorical ones for values that are names, and
//! sequential gradients for numbers. The defaults are colour-blind safe (Okabe–Ito, Paul Tol's
//! muted, viridis); past nine values no palette stays distinguishable to every reader, so the
//! 19 colours of Kelly's maximum-contrast set are used and the answer says so.

use csscolorparser::Color;

/// A categorical palette: colours in the order values receive them (most frequent first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Categorical {
    /// Its name, as a caller writes it.
    pub name: &'static str,
    /// Its colours, lowercase `#rrggbb`.
    pub colors: &'static [&'static str],
    /// Distinguishable with the common colour-vision deficiencies.
    pub colorblind_safe: bool,
}

/// A sequential palette: stops evenly spaced from the low end to the high end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sequential {
    /// Its name, as a caller writes it.
    pub name: &'static str,
    /// Its stops, lowercase `#rrggbb`, low to high.
    pub stops: &'static [&'static str],
}

/// The colour of values past the palette's last colour ("other"): a neutral grey that no
/// categorical palette here uses.
pub const OTHER_COLOR: &str = "#7f7f7f";

/// Okabe and Ito's palette for colour-vision deficiencies, without its black (invisible on the
/// dark view).
pub const OKABE_ITO: Categorical = Categorical {
    name: "okabe-ito",
    colors: &["#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"],
    colorblind_safe: true,
};

/// Paul Tol's muted scheme: nine colours safe for colour-vision deficiencies.
pub const TOL_MUTED: Categorical = Categorical {
    name: "tol-muted",
    colors: &[
        "#cc6677", "#332288", "#ddcc77", "#117733", "#88ccee", "#882255", "#44aa99", "#999933",
        "#aa4499",
    ],
    colorblind_safe: true,
};

/// Tableau 10: common in dashboards, not safe for every reader.
pub const TABLEAU10: Categorical = Categorical {
    name: "tableau10",
    colors: &[
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
        "#9c755f", "#bab0ac",
    ],
    colorblind_safe: false,
};

/// Kelly's colours of maximum contrast, without white, black and grey: the most categories a
/// palette here tells apart.
pub const KELLY: Categorical = Categorical {
    name: "kelly",
    colors: &[
        "#f3c300", "#875692", "#f38400", "#a1caf1", "#be0032", "#c2b280", "#008856", "#e68fac",
        "#0067a5", "#f99379", "#604e97", "#f6a600", "#b3446c", "#dcd300", "#882d17", "#8db600",
        "#654522", "#e25822", "#2b3d26",
    ],
    colorblind_safe: false,
};

/// Every categorical palette, the default first.
pub const CATEGORICAL: [Categorical; 4] = [OKABE_ITO, TOL_MUTED, TABLEAU10, KELLY];

/// matplotlib's viridis: perceptually uniform, readable in grey and by colour-blind readers.
pub const VIRIDIS: Sequential = Sequential {
    name: "viridis",
    stops: &[
        "#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58",
        "#b5de2b", "#fde725",
    ],
};

/// cividis: viridis made for deuteranopia and protanopia.
pub const CIVIDIS: Sequential = Sequential {
    name: "cividis",
    stops: &[
        "#00224e", "#123570", "#3b496c", "#575d6d", "#707173", "#8a8678", "#a59c74", "#c3b369",
        "#e1cc55", "#fee838",
    ],
};

/// plasma.
pub const PLASMA: Sequential = Sequential {
    name: "plasma",
    stops: &[
        "#0d0887", "#47039f", "#7301a8", "#9c179e", "#bd3786", "#d8576b", "#ed7953", "#fb9f3a",
        "#fdca26", "#f0f921",
    ],
};

/// magma.
pub const MAGMA: Sequential = Sequential {
    name: "magma",
    stops: &[
        "#000004", "#180f3d", "#440f76", "#721f81", "#9e2f7f", "#cd4071", "#f1605d", "#fd9668",
        "#feca8d", "#fcfdbf",
    ],
};

/// inferno.
pub const INFERNO: Sequential = Sequential {
    name: "inferno",
    stops: &[
        "#000004", "#1b0c41", "#4a0c6b", "#781c6d", "#a52c60", "#cf4446", "#ed6925", "#fb9b06",
        "#f7d13d", "#fcffa4",
    ],
};

/// Every sequential palette, the default first.
pub const SEQUENTIAL: [Sequential; 5] = [VIRIDIS, CIVIDIS, PLASMA, MAGMA, INFERNO];

/// The categorical palette called `name`.
pub fn categorical(name: &str) -> Option<Categorical> {
    CATEGORICAL.into_iter().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The sequential palette called `name`.
pub fn sequential(name: &str) -> Option<Sequential> {
    SEQUENTIAL.into_iter().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The categorical palette for `n` values when none is asked: the colour-blind-safe ones while
/// they have colours enough, else Kelly's.
pub fn categorical_for(n: usize) -> Categorical {
    if n <= OKABE_ITO.colors.len() {
        OKABE_ITO
    } else if n <= TOL_MUTED.colors.len() {
        TOL_MUTED
    } else {
        KELLY
    }
}

/// The colour at `t` (0 to 1) along `stops`, interpolated in OKLab (perceptually even between
/// stops a caller gives, however far apart), as lowercase `#rrggbb`.
pub fn gradient_color(stops: &[Color], t: f64) -> String {
    let hex = |c: &Color| {
        let [r, g, b, _] = c.to_rgba8();
        format!("#{r:02x}{g:02x}{b:02x}")
    };
    match stops {
        [] => OTHER_COLOR.to_string(),
        [only] => hex(only),
        _ => {
            let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
            let span = (stops.len() - 1) as f64;
            let at = t * span;
            let i = (at.floor() as usize).min(stops.len() - 2);
            let local = (at - i as f64) as f32;
            hex(&stops[i].interpolate_oklab(&stops[i + 1], local))
        }
    }
}

/// `colors` parsed (each one valid: they were normalised when the layer was added).
pub fn parse_stops(colors: &[impl AsRef<str>]) -> Vec<Color> {
    colors.iter().filter_map(|c| csscolorparser::parse(c.as_ref()).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradients_hit_their_stops_and_clamp_outside() {
        let stops = parse_stops(VIRIDIS.stops);
        assert_eq!(gradient_color(&stops, 0.0), "#440154");
        assert_eq!(gradient_color(&stops, 1.0), "#fde725");
        assert_eq!(gradient_color(&stops, 1.0 / 9.0), "#482878");
        assert_eq!(gradient_color(&stops, -3.0), "#440154");
        assert_eq!(gradient_color(&stops, 7.0), "#fde725");
        assert_eq!(gradient_color(&stops, f64::NAN), "#440154");
        let two = parse_stops(&["#ffffff", "#ff0000"]);
        let mid = gradient_color(&two, 0.5);
        assert!(mid.starts_with("#ff") && mid != "#ffffff" && mid != "#ff0000", "{mid}");
    }

    #[test]
    fn every_palette_colour_is_distinct_hex_and_not_the_other_colour() {
        for palette in CATEGORICAL {
            let mut seen = std::collections::HashSet::new();
            for c in palette.colors {
                assert!(c.len() == 7 && c.starts_with('#'), "{c}");
                assert!(seen.insert(*c), "{} repeats {c}", palette.name);
                assert_ne!(*c, OTHER_COLOR);
            }
        }
        assert_eq!(categorical_for(7).name, "okabe-ito");
        assert_eq!(categorical_for(9).name, "tol-muted");
        assert_eq!(categorical_for(10).name, "kelly");
        assert_eq!(categorical("Tableau10").map(|p| p.name), Some("tableau10"));
        assert_eq!(sequential("MAGMA").map(|p| p.name), Some("magma"));
    }
}

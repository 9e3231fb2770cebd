//! Colours as the renderer takes them: CSS names and any CSS colour syntax become `#rrggbb`
//! (or `#rrggbbaa` when not opaque).

use crate::error::LayerError;

/// `color` (`red`, `SteelBlue`, `#F00`, `rgb(255 0 0)`) as lowercase hex.
pub fn normalize_color(color: &str) -> Result<String, LayerError> {
    let parsed = csscolorparser::parse(color.trim()).map_err(|_| {
        LayerError::InvalidStyle(format!(
            "`{color}` is not a colour; use a CSS colour name (red, steelblue) or hex (#ff0000)"
        ))
    })?;
    let [r, g, b, a] = parsed.to_rgba8();
    Ok(if a == 255 {
        format!("#{r:02x}{g:02x}{b:02x}")
    } else {
        format!("#{r:02x}{g:02x}{b:02x}{a:02x}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_notations_become_hex() {
        assert_eq!(normalize_color("red").expect("red"), "#ff0000");
        assert_eq!(normalize_color("SteelBlue").expect("name"), "#4682b4");
        assert_eq!(normalize_color("#F00").expect("short hex"), "#ff0000");
        assert_eq!(normalize_color("rgb(0 128 0 / 50%)").expect("rgb"), "#00800080");
        assert!(normalize_color("notacolour").unwrap_err().to_string().contains("CSS colour name"));
    }
}

//! The view (2D or 3D, camera, preset, viewport size reported by the page) and the layout
//! (type, options, settled) of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// 2D or 3D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Dimension {
    /// Flat.
    #[serde(rename = "2d", alias = "2D")]
    TwoD,
    /// With depth.
    #[default]
    #[serde(rename = "3d", alias = "3D")]
    ThreeD,
}

/// Named camera positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CameraPreset {
    /// Everything in view.
    FitToGraph,
    /// From above.
    TopView,
    /// From the side.
    SideView,
    /// From the front.
    FrontView,
    /// At equal angles to the three axes.
    Isometric,
}

/// The camera.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// Where the camera is.
    pub position: [f64; 3],
    /// What it looks at.
    pub target: [f64; 3],
    /// Zoom factor (1 = default).
    pub zoom: f64,
    /// The preset it was set from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<CameraPreset>,
}

impl Default for Camera {
    fn default() -> Self {
        Self { position: [0.0, 0.0, 100.0], target: [0.0; 3], zoom: 1.0, preset: Some(CameraPreset::FitToGraph) }
    }
}

/// What the person sees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct View {
    /// 2D or 3D.
    pub dimension: Dimension,
    /// The camera.
    pub camera: Camera,
    /// Width and height of the page's canvas in pixels, once a page reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewport: Option<[u32; 2]>,
}

/// Layout algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum LayoutType {
    /// Force-directed (2D or 3D).
    #[default]
    ForceDirected,
    /// Nodes on a circle.
    Circular,
    /// Seeded random positions.
    Random,
    /// A spiral.
    Spiral,
    /// Concentric shells.
    Shell,
    /// A grid.
    Grid,
    /// Positions taken from the data.
    Fixed,
}

/// The layout in use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    /// The algorithm.
    #[serde(rename = "type")]
    pub layout_type: LayoutType,
    /// Its options (seed, iterations, position property, …).
    pub options: Value,
    /// True once positions stopped changing.
    pub settled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_contracts_spelling() {
        assert_eq!(serde_json::to_value(Dimension::TwoD).expect("json"), "2d");
        assert_eq!(serde_json::from_str::<Dimension>("\"3D\"").expect("alias"), Dimension::ThreeD);
        assert_eq!(serde_json::to_value(CameraPreset::FitToGraph).expect("json"), "fitToGraph");
        assert_eq!(serde_json::to_value(LayoutType::ForceDirected).expect("json"), "forceDirected");
        let layout = Layout { layout_type: LayoutType::Circular, options: serde_json::json!({}), settled: true };
        assert_eq!(serde_json::to_value(&layout).expect("json")["type"], "circular");
    }
}

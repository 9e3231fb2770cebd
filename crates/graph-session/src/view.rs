//! The view (2D or 3D, camera, preset, viewport size reported by the page) and the layout
//! (type, options, settled) of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The largest camera or node coordinate accepted (far beyond any layout's extent): the distance
/// between two points near f64::MAX overflows to infinity, and every later camera computation
/// to NaN.
pub const MAX_COORDINATE: f64 = 1e12;

/// The largest zoom factor a saved camera may have (the tools set 1).
pub const MAX_ZOOM: f64 = 1e6;

/// The largest canvas side, in pixels, a page may report.
pub const MAX_VIEWPORT_SIDE: u32 = 100_000;

/// 2D or 3D.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
        Self {
            position: [0.0, 0.0, 100.0],
            target: [0.0; 3],
            zoom: 1.0,
            preset: Some(CameraPreset::FitToGraph),
        }
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
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
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

/// The centre and radius of a set of positions (radius at least 1, so a single node is framed).
pub fn bounds(positions: &[[f64; 3]]) -> ([f64; 3], f64) {
    if positions.is_empty() {
        return ([0.0; 3], 1.0);
    }
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in positions {
        for d in 0..3 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let centre = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0, (lo[2] + hi[2]) / 2.0];
    let radius = positions
        .iter()
        .map(|p| {
            ((p[0] - centre[0]).powi(2) + (p[1] - centre[1]).powi(2) + (p[2] - centre[2]).powi(2))
                .sqrt()
        })
        .fold(0.0f64, f64::max);
    (centre, radius.max(1.0))
}

/// Distance at which a sphere of `radius` fills a 60° field of view, with a margin.
fn framing_distance(radius: f64) -> f64 {
    radius / (30f64.to_radians().sin()) * 1.1
}

impl Camera {
    /// The camera a preset gives for nodes at `positions`. In 2D every preset looks straight
    /// down the z axis (there is no depth to look at from the side).
    pub fn preset(preset: CameraPreset, positions: &[[f64; 3]], dimension: Dimension) -> Self {
        let (target, radius) = bounds(positions);
        let d = framing_distance(radius);
        let direction = match (dimension, preset) {
            (Dimension::TwoD, _) | (_, CameraPreset::FitToGraph | CameraPreset::FrontView) => {
                [0.0, 0.0, 1.0]
            }
            (_, CameraPreset::TopView) => [0.0, 1.0, 1e-6],
            (_, CameraPreset::SideView) => [1.0, 0.0, 0.0],
            (_, CameraPreset::Isometric) => [1.0 / 3f64.sqrt(); 3],
        };
        Self {
            position: [
                target[0] + direction[0] * d,
                target[1] + direction[1] * d,
                target[2] + direction[2] * d,
            ],
            target,
            zoom: 1.0,
            preset: Some(preset),
        }
    }

    /// The camera looking at `positions` (a subset of nodes) from the current direction.
    pub fn framing(&self, positions: &[[f64; 3]]) -> Self {
        let (target, radius) = bounds(positions);
        let mut direction = [
            self.position[0] - self.target[0],
            self.position[1] - self.target[1],
            self.position[2] - self.target[2],
        ];
        let length = direction.iter().map(|x| x * x).sum::<f64>().sqrt();
        if length < 1e-9 {
            direction = [0.0, 0.0, 1.0];
        } else {
            direction.iter_mut().for_each(|x| *x /= length);
        }
        let d = framing_distance(radius);
        Self {
            position: [
                target[0] + direction[0] * d,
                target[1] + direction[1] * d,
                target[2] + direction[2] * d,
            ],
            target,
            zoom: 1.0,
            preset: None,
        }
    }

    /// Distance from the camera to its target.
    pub fn distance(&self) -> f64 {
        (0..3).map(|d| (self.position[d] - self.target[d]).powi(2)).sum::<f64>().sqrt()
    }
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
        let layout = Layout {
            layout_type: LayoutType::Circular,
            options: serde_json::json!({}),
            settled: true,
        };
        assert_eq!(serde_json::to_value(&layout).expect("json")["type"], "circular");
    }

    #[test]
    fn presets_frame_the_nodes_from_their_side() {
        let positions = [[-10.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 4.0, 0.0]];
        let fit = Camera::preset(CameraPreset::FitToGraph, &positions, Dimension::ThreeD);
        assert_eq!(fit.target, [0.0, 2.0, 0.0]);
        assert!(fit.position[2] > 20.0 && fit.position[0] == 0.0, "{fit:?}");
        let side = Camera::preset(CameraPreset::SideView, &positions, Dimension::ThreeD);
        assert!(side.position[0] > 20.0 && side.position[2] == 0.0, "{side:?}");
        let side_2d = Camera::preset(CameraPreset::SideView, &positions, Dimension::TwoD);
        assert_eq!(side_2d.position[0], 0.0, "2D always looks down z");
        let iso = Camera::preset(CameraPreset::Isometric, &positions, Dimension::ThreeD);
        assert!((iso.distance() - fit.distance()).abs() < 1e-9);
        let close = fit.framing(&[[10.0, 0.0, 0.0]]);
        assert_eq!(close.target, [10.0, 0.0, 0.0]);
        assert!(close.distance() < fit.distance());
    }
}

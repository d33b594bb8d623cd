//! The slot map: all 16384 slots as a 128 × 128 grid (slot 0 top left, row by row) coloured by
//! owner at one instant, slots being migrated hatched and outlined in amber, unassigned slots grey.

use plotters::coord::Shift;
use plotters::prelude::*;

use slotscope_core::track::Layout;
use slotscope_core::{NodeAddr, Slot, SlotRange, SLOT_COUNT};

use super::frame::{err, DrawError};
use super::palette::{color, MIGRATING};

/// Cells per row (and rows).
pub const SIDE: u32 = 128;
/// Pixels per cell on the canvas.
pub const CELL: u32 = 3;
/// The canvas' width and height in pixels.
pub const SIZE: u32 = SIDE * CELL;
/// Colour of unassigned slots.
pub const UNASSIGNED: RGBColor = RGBColor(228, 231, 236);
/// How far the amber ring around migrating slots reaches outside them, in pixels.
pub const RING: i32 = 2;
/// The opacity owners are drawn with (as on the topology track).
pub const OWNER_ALPHA: f64 = 0.55;

/// The CSS colour of node `i` as the map draws it (for legend swatches).
pub fn css_color(i: usize) -> String {
    let c = color(i);
    format!("rgba({},{},{},{OWNER_ALPHA})", c.0, c.1, c.2)
}

/// The cell blocks covering `range` in row-major order, as `(col0, row0, col1, row1)` with
/// exclusive ends: at most three (a partial first row, full rows, a partial last row).
pub fn blocks(range: SlotRange) -> Vec<(u32, u32, u32, u32)> {
    let (a, b) = (
        u32::from(range.start().get()),
        u32::from(range.end().get()) + 1,
    );
    let (ra, ca) = (a / SIDE, a % SIDE);
    let (rb, cb) = (b / SIDE, b % SIDE);
    if ra == rb {
        return vec![(ca, ra, cb, ra + 1)];
    }
    let mut out = Vec::with_capacity(3);
    let mut full_from = ra;
    if ca > 0 {
        out.push((ca, ra, SIDE, ra + 1));
        full_from += 1;
    }
    if rb > full_from {
        out.push((0, full_from, SIDE, rb));
    }
    if cb > 0 {
        out.push((0, rb, cb, rb + 1));
    }
    out
}

/// The slot under the point `(x, y)` (CSS pixels) of a map displayed `width` × `height` large.
pub fn slot_at(x: i32, y: i32, width: i32, height: i32) -> Option<u16> {
    let cell = |v: i32, size: i32| -> Option<i64> {
        (size > 0 && (0..size).contains(&v))
            .then(|| i64::from(v) * i64::from(SIDE) / i64::from(size))
    };
    let (col, row) = (cell(x, width)?, cell(y, height)?);
    u16::try_from(row * i64::from(SIDE) + col)
        .ok()
        .filter(|s| *s < SLOT_COUNT)
}

/// Slots owned per node (indexed like the nodes, `nodes` long), at `layout`.
pub fn counts(layout: Option<&Layout>, nodes: usize) -> Vec<usize> {
    let mut out = vec![0; nodes];
    for (r, n) in layout.map_or(&[][..], |l| &l.owners[..]) {
        if let Some(c) = out.get_mut(*n) {
            *c += r.len();
        }
    }
    out
}

/// Slots being migrated at `layout`.
pub fn migrating_count(layout: Option<&Layout>) -> usize {
    layout.map_or(0, |l| l.migrating.iter().map(|(r, _, _)| r.len()).sum())
}

/// What the hover line says about `slot`: its number, owner, and migration if any.
pub fn describe(slot: u16, layout: Option<&Layout>, nodes: &[NodeAddr]) -> String {
    let name = |n: usize| {
        nodes
            .get(n)
            .map_or_else(|| format!("node {n}"), |a| a.to_string())
    };
    let Some(s) = Slot::new(slot) else {
        return String::new();
    };
    let owner = layout
        .and_then(|l| l.owner(s))
        .map_or_else(|| "unassigned".to_owned(), name);
    let migrating = layout
        .and_then(|l| l.migrating.iter().find(|(r, _, _)| r.contains(s)))
        .map_or_else(
            || "not migrating".to_owned(),
            |(_, from, to)| format!("migrating {} → {}", name(*from), name(*to)),
        );
    format!("slot {slot} · owner {owner} · {migrating}")
}

fn px(cells: u32, cell: u32) -> i32 {
    i32::try_from(cells * cell).unwrap_or(i32::MAX)
}

/// Draws the map of `layout` onto `area` (`None`: nothing known yet, all grey).
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    layout: Option<&Layout>,
) -> Result<(), DrawError> {
    area.fill(&WHITE).map_err(err)?;
    let (w, h) = area.dim_in_pixel();
    let cell = (w.min(h) / SIDE).max(1);
    let rect = |(c0, r0, c1, r1): (u32, u32, u32, u32)| {
        [(px(c0, cell), px(r0, cell)), (px(c1, cell), px(r1, cell))]
    };
    let all = SlotRange::try_from((0, SLOT_COUNT - 1)).map_err(err)?;
    for b in blocks(all) {
        area.draw(&Rectangle::new(rect(b), UNASSIGNED.filled()))
            .map_err(err)?;
    }
    let Some(layout) = layout else {
        return Ok(());
    };
    for (range, node) in &layout.owners {
        for b in blocks(*range) {
            // Over white first, so the colour is the topology track's.
            area.draw(&Rectangle::new(rect(b), WHITE.filled()))
                .map_err(err)?;
            area.draw(&Rectangle::new(
                rect(b),
                color(*node).mix(OWNER_ALPHA).filled(),
            ))
            .map_err(err)?;
        }
    }
    for (range, _, _) in &layout.migrating {
        for b in blocks(*range) {
            let [(x0, y0), (x1, y1)] = rect(b);
            // Diagonal hatch (x + y = k), clipped to the block.
            let mut k = x0 + y0 + 2;
            while k < x1 + y1 {
                let (xa, xb) = ((k - y1).max(x0), (k - y0).min(x1));
                if xa < xb {
                    area.draw(&PathElement::new(
                        vec![(xa, k - xa), (xb, k - xb)],
                        MIGRATING,
                    ))
                    .map_err(err)?;
                }
                k += 5;
            }
            // A ring around the block, outside the cells, so a single slot in flight shows.
            let (rw, rh) = (px(SIDE, cell), px(SIDE, cell));
            area.draw(&Rectangle::new(
                [
                    ((x0 - RING).max(0), (y0 - RING).max(0)),
                    ((x1 + RING - 1).min(rw), (y1 + RING - 1).min(rh)),
                ],
                MIGRATING.stroke_width(2),
            ))
            .map_err(err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotscope_core::Timestamp;

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::try_from((a, b)).unwrap()
    }

    fn svg(layout: Option<&Layout>) -> String {
        let mut out = String::new();
        {
            let backend = SVGBackend::with_string(&mut out, (SIZE, SIZE));
            let area = backend.into_drawing_area();
            draw(&area, layout).unwrap();
            area.present().unwrap();
        }
        out
    }

    fn attr(line: &str, name: &str) -> Option<String> {
        Some(
            line.split(&format!(" {name}=\""))
                .nth(1)?
                .split('"')
                .next()?
                .to_owned(),
        )
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// The fill of the last filled rectangle drawn over the centre of `slot`'s cell.
    fn fill_at(svg: &str, slot: u16) -> Option<String> {
        let (col, row) = (u32::from(slot) % SIDE, u32::from(slot) / SIDE);
        let (x, y) = (f64::from(col * CELL) + 1.5, f64::from(row * CELL) + 1.5);
        svg.lines()
            .rev()
            .filter(|l| l.trim_start().starts_with("<rect"))
            .filter(|l| attr(l, "fill").is_some_and(|f| f != "none"))
            .find(|l| {
                let n = |a| {
                    attr(l, a)
                        .and_then(|v| v.parse::<f64>().ok())
                        .unwrap_or(-1.0)
                };
                let (rx, ry, rw, rh) = (n("x"), n("y"), n("width"), n("height"));
                rx <= x && x < rx + rw && ry <= y && y < ry + rh
            })
            .and_then(|l| attr(l, "fill"))
    }

    fn halves(migrating: Vec<(SlotRange, usize, usize)>) -> Layout {
        Layout {
            t: Timestamp(0),
            owners: vec![(range(0, 8191), 0), (range(8192, 16000), 1)],
            migrating,
        }
    }

    #[test]
    fn ranges_split_into_at_most_three_row_blocks() {
        assert_eq!(blocks(range(0, 16383)), vec![(0, 0, 128, 128)]);
        assert_eq!(blocks(range(5, 9)), vec![(5, 0, 10, 1)]);
        assert_eq!(blocks(range(0, 127)), vec![(0, 0, 128, 1)]);
        assert_eq!(
            blocks(range(100, 8291)),
            vec![(100, 0, 128, 1), (0, 1, 128, 64), (0, 64, 100, 65)]
        );
        assert_eq!(blocks(range(8192, 16383)), vec![(0, 64, 128, 128)]);
    }

    #[test]
    fn a_point_maps_back_to_its_slot_at_any_display_size() {
        assert_eq!(slot_at(0, 0, 384, 384), Some(0));
        assert_eq!(slot_at(383, 383, 384, 384), Some(16383));
        assert_eq!(slot_at(4, 1, 384, 384), Some(1));
        // Displayed at 256 px: 2 px per cell.
        assert_eq!(slot_at(5, 3, 256, 256), Some(128 + 2));
        assert_eq!(slot_at(384, 10, 384, 384), None);
        assert_eq!(slot_at(-1, 10, 384, 384), None);
        assert_eq!(slot_at(1, 1, 0, 0), None);
    }

    #[test]
    fn cells_take_their_owners_colour_and_unassigned_slots_are_grey() {
        let l = halves(Vec::new());
        let svg = svg(Some(&l));
        assert_eq!(fill_at(&svg, 0).as_deref(), Some(hex(color(0)).as_str()));
        assert_eq!(fill_at(&svg, 8191).as_deref(), Some(hex(color(0)).as_str()));
        assert_eq!(fill_at(&svg, 8192).as_deref(), Some(hex(color(1)).as_str()));
        assert_eq!(
            fill_at(&svg, 16000).as_deref(),
            Some(hex(color(1)).as_str())
        );
        assert_eq!(
            fill_at(&svg, 16001).as_deref(),
            Some(hex(UNASSIGNED).as_str())
        );
        assert!(!svg.contains(&hex(MIGRATING)), "nothing is migrating");
        // Nothing known: all grey.
        let empty = self::svg(None);
        assert_eq!(
            fill_at(&empty, 0).as_deref(),
            Some(hex(UNASSIGNED).as_str())
        );
    }

    #[test]
    fn migrating_slots_are_outlined_in_amber() {
        // Slots 8192..=8200 in flight: the first 9 cells of row 64.
        let l = halves(vec![(range(8192, 8200), 1, 0)]);
        let svg = svg(Some(&l));
        let amber = hex(MIGRATING);
        let outline: Vec<&str> = svg
            .lines()
            .filter(|l| l.contains("<rect") && l.contains(&format!("stroke=\"{amber}\"")))
            .collect();
        assert_eq!(outline.len(), 1, "{outline:?}");
        assert_eq!(attr(outline[0], "x").as_deref(), Some("0"));
        // Two pixels above the block (row 64, y 192), clamped at the left edge.
        assert_eq!(attr(outline[0], "y").as_deref(), Some("190"));
        let hatch = svg
            .lines()
            .filter(|l| l.contains("<polyline") && l.contains(&amber))
            .count();
        assert!(hatch >= 3, "hatch lines: {hatch}");
        // The owner's colour still shows under the hatch.
        assert_eq!(fill_at(&svg, 8195).as_deref(), Some(hex(color(1)).as_str()));
        // A single slot in flight (8300: column 108 of row 64) gets a ring larger than its cell.
        let one = halves(vec![(range(8300, 8300), 1, 0)]);
        let svg = self::svg(Some(&one));
        let ring = svg
            .lines()
            .find(|l| l.contains("<rect") && l.contains(&format!("stroke=\"{amber}\"")))
            .expect("a ring");
        assert_eq!(attr(ring, "x").as_deref(), Some("322"));
        assert_eq!(attr(ring, "y").as_deref(), Some("190"));
        let w: i32 = attr(ring, "width").unwrap().parse().unwrap();
        assert!(w > i32::try_from(CELL).unwrap() + 1, "ring width {w}");
    }

    #[test]
    fn legend_counts_and_hover_text() {
        let l = halves(vec![(range(8192, 8200), 1, 0)]);
        assert_eq!(counts(Some(&l), 3), vec![8192, 7809, 0]);
        assert_eq!(counts(None, 2), vec![0, 0]);
        assert_eq!(migrating_count(Some(&l)), 9);
        let nodes = vec![
            NodeAddr::new("127.0.0.1", 22804).unwrap(),
            NodeAddr::new("127.0.0.1", 22807).unwrap(),
        ];
        assert_eq!(
            describe(8193, Some(&l), &nodes),
            "slot 8193 · owner 127.0.0.1:22807 · migrating 127.0.0.1:22807 → 127.0.0.1:22804"
        );
        assert_eq!(
            describe(5, Some(&l), &nodes),
            "slot 5 · owner 127.0.0.1:22804 · not migrating"
        );
        assert_eq!(
            describe(16383, Some(&l), &nodes),
            "slot 16383 · owner unassigned · not migrating"
        );
    }
}

"""The app's page style: one stylesheet for the layout and the class names the views use.

:func:`logrerank.app.main.launch_kwargs` hands :data:`CSS` to ``demo.launch``. The HTML of
the views (:mod:`~logrerank.app.viz`, :mod:`~logrerank.app.compare_view`,
:mod:`~logrerank.app.heat_view`, ...) names these classes instead of repeating inline styles;
what varies per item (a role's colour, a score's shade) stays inline. The graph view is a
separate document in an iframe and keeps its own style (:mod:`~logrerank.app.graph_view`).
"""

from __future__ import annotations

LAYOUT_CSS = """
#results-tabs .tab-container button { padding-left: 9px; padding-right: 9px; }
#table td, #table th { vertical-align: top; }
#table th .header { white-space: nowrap; word-break: keep-all; overflow-wrap: normal; }
#table td span, #details td span { font-family: var(--font); }
.lr-examples button { white-space: normal; }
.lr-narrow { display: none; }
@media (max-width: 640px) {
  #results-tabs .tab-container button { padding-left: 5px; padding-right: 5px; font-size: 13px; }
  .lr-wide { display: none; }
  .lr-narrow { display: inline; }
}
"""
"""Layout of the page: tabs, tables, example buttons, phone widths."""

TABLE_FIT_CSS = """
#table, #details, #metrics { --lr-cols: repeat(var(--lr-n, 6), minmax(0, 1fr)); }
#table { --lr-cols: 52px minmax(0, 1fr) 72px 72px 70px minmax(0, 0.3fr) 104px; }
#details { --lr-n: 13; }
#metrics { --lr-cols: 92px minmax(0, 2.2fr) repeat(4, minmax(0, 1fr)); }
:is(#table, #details, #metrics) .header-table { width: 100% !important; display: block; }
:is(#table, #details, #metrics) .header-table thead { display: block; }
:is(#table, #details, #metrics) .sizing-body { display: none; }
:is(#table, #details, #metrics) .header-table thead tr,
:is(#table, #details, #metrics) .virtual-row {
  display: grid !important; grid-template-columns: var(--lr-cols); }
:is(#table, #details, #metrics) .virtual-body { width: 100% !important; }
:is(#table, #details, #metrics) .header-table th,
:is(#table, #details, #metrics) .virtual-row > .body-cell {
  width: auto !important; min-width: 0 !important; max-width: none !important;
  flex: none !important; }
:is(#details, #metrics) .virtual-row span, :is(#details, #metrics) th span {
  white-space: normal; overflow-wrap: anywhere; text-overflow: clip; }
#details .header-table th span { font-size: 12px; }
@media (max-width: 640px) {
  :is(#table, #details, #metrics) { font-size: 12px; }
  :is(#table, #details, #metrics) .virtual-row, :is(#table, #details, #metrics) thead tr {
    font-size: 12px; border-bottom: 1px solid var(--border-color-primary); }
  :is(#table, #details, #metrics) .cell-wrap { padding: 4px 5px; min-height: 26px; }
  /* ranking: rank, score, Δ vs CE, P·S, role on one line; the text (and a PDF's source) on
     full-width lines below */
  #table { --lr-cols: 38px minmax(0, 1fr) minmax(0, 1fr) minmax(0, 1.1fr) 84px; }
  #table .header-table th:nth-child(2), #table .virtual-row > .body-cell:nth-child(2) {
    grid-column: 1 / -1; order: 1; }
  #table .virtual-row > .body-cell:nth-child(6) { grid-column: 1 / -1; order: 2; }
  #table .virtual-row > .body-cell:nth-child(6):not(:has(span:not(:empty))) { display: none; }
  #table .header-table th:nth-child(2) { grid-column: 1 / 4; }
  #table .header-table th:nth-child(6) { grid-column: 4 / -1; order: 1; }
  #table .header-table th .header { white-space: normal; }
  /* details: 13 columns as 5 per line, each row a block of 3 lines under the same header */
  #details { --lr-n: 5; }
  #details .virtual-row > .body-cell, #details .header-table th { box-shadow: none; }
  #metrics { --lr-cols: 64px minmax(0, 2fr) repeat(4, minmax(0, 1fr)); }
  /* Explain's score and neighbour tables wrap inside the screen instead of scrolling */
  #explain table { width: 100%; table-layout: fixed; }
  #explain td, #explain th { overflow-wrap: anywhere; vertical-align: top; padding-right: 4px; }
}
"""
"""The tables (ranking, score details, agreement) fit their column: Gradio's dataframe gives
each column a fixed width in pixels, which runs wider than the page; here each row and the
header are one CSS grid of the same columns, so the header stays above its values. On a phone
the ranking's text gets its own full-width line and the 13 score details wrap, 5 per line."""

VIEW_CSS = """
.lr-empty { font-size: 14px; padding: 8px 10px; background: #f3f7ff;
  border-left: 4px solid #2C7FB8; margin-bottom: 6px; }
.lr-status { font-size: 13px; line-height: 1.5; }
.lr-warning { background: #fff4e5; border-left: 4px solid #d97706; padding: 3px 8px;
  margin-top: 4px; }
.lr-more summary { cursor: pointer; color: #555; }
.lr-error { background: #ffebe9; border-left: 4px solid #cf222e; padding: 6px 10px;
  font-size: 14px; }
.lr-badge { color: #fff; border-radius: 4px; padding: 0 5px; font-size: 11px; }
.lr-badge-trained { background: #1a7f37; }
.lr-badge-untrained { background: #cf222e; }
.lr-badge-unavailable { background: #a15c00; }
.lr-kept { margin-top: 4px; }
.lr-note { font-size: 12px; color: #555; }
.lr-bold { font-weight: 600; }
.lr-card { border: 1px solid #e3e3e3; border-radius: 6px; }
.lr-shift-up { color: #1a7f37; }
.lr-shift-down { color: #cf222e; }
.lr-shift-none { color: #888; }
.lr-compare-head { font-weight: 600; font-size: 14px; }
.lr-compare-note { font-size: 13px; color: #444; }
.lr-compare-title { font-weight: 600; margin: 6px 0; }
.lr-columns { display: flex; gap: 10px; flex-wrap: wrap; }
.lr-column { flex: 1 1 230px; min-width: 230px; padding: 6px 8px; }
.lr-column-note { font-size: 11px; color: #a15c00; }
.lr-column ol { margin: 4px 0 0 0; padding-left: 22px; font-size: 12.5px; }
.lr-column li { margin-bottom: 3px; padding-left: 4px; border-left: 3px solid transparent; }
.lr-column .lr-score { color: #555; font-size: 11.5px; }
.lr-column .lr-text { color: #333; }
.lr-heat { font-size: 14px; line-height: 1.6; }
.lr-heat .lr-note { margin-bottom: 6px; }
.lr-heat .lr-card { padding: 8px 10px; margin: 8px 0; }
.lr-role-key { padding: 0 3px; border-bottom: 3px solid transparent; }
.lr-sent { padding: 1px 2px; margin: 0 1px; border-radius: 3px;
  border-bottom: 3px solid transparent; }
.lr-sent sup { color: #555; }
"""
"""Classes of the views' HTML (status panel, comparison columns, heat map, notes)."""

CSS = LAYOUT_CSS + TABLE_FIT_CSS + VIEW_CSS
"""The page's stylesheet (``demo.launch(css=CSS)``)."""

__all__ = ["CSS", "LAYOUT_CSS", "TABLE_FIT_CSS", "VIEW_CSS"]

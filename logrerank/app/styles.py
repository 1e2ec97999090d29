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

CSS = LAYOUT_CSS + VIEW_CSS
"""The page's stylesheet (``demo.launch(css=CSS)``)."""

__all__ = ["CSS", "LAYOUT_CSS", "VIEW_CSS"]

"""Synthetic table scenes: sampled game positions rendered into labelled images for the detector.

`scenes` samples a plausible table for each game, `render` draws it (moderngl, headless EGL),
`labels` derives the YOLO-pose labels and the JSON truth from geometry, and `dataset` writes a
ready ultralytics dataset. See docs/synth.md.
"""

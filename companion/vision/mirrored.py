"""Looking twice: the detector runs on the frame and on its mirror image, and the two are merged.

A pyramid's class (size, upright or lying) and a token's kind do not change in a mirror, but the
network's mistakes do: a piece half hidden behind a tower, or at the edge of a stack, is often
found in one picture and not the other, and a false detection seldom appears in both at once.
So the two looks are paired up box by box, each pair's confidence is the mean of its two
scores, and a detection seen in only one look counts for `lone_weight` of its score. On the
validation renders this found more pieces *and* fewer false ones than one look (docs/pipeline.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from companion.vision.detection import Detection, Point, box_iou


def mirrored(detection: Detection, width: int) -> Detection:
    """The detection of a left-right mirrored picture `width` pixels wide, in the original picture."""
    x1, y1, x2, y2 = detection.box
    flip = (lambda p: None if p is None else (width - p[0], p[1]))
    return replace(detection, box=(width - x2, y1, width - x1, y2), apex=flip(detection.apex),
                   contact=flip(detection.contact))


def _weighted_point(members: Sequence[Detection], which: int) -> Point | None:
    """The members' keypoint (0 apex, 1 contact), weighted by its visibility, where seen."""
    seen = [(d.apex if which == 0 else d.contact, d.keypoint_confidence[which]) for d in members]
    seen = [(p, max(w, 1e-6)) for p, w in seen if p is not None]
    if not seen:
        return None
    total = sum(w for _, w in seen)
    return (sum(p[0] * w for p, w in seen) / total, sum(p[1] * w for p, w in seen) / total)


def _merged(members: Sequence[Detection], confidence: float) -> Detection:
    """One detection for an object seen once or twice: the class with the most confidence
    behind it, the box averaged by confidence, keypoints by their visibility."""
    votes: dict[str, float] = defaultdict(float)
    for d in members:
        votes[d.class_name] += d.confidence
    winner = max(votes, key=votes.__getitem__)
    best = max((d for d in members if d.class_name == winner), key=lambda d: d.confidence)
    total = sum(d.confidence for d in members)
    box = tuple(sum(d.box[k] * d.confidence for d in members) / total for k in range(4))
    visibility = tuple(sum(d.keypoint_confidence[k] for d in members) / len(members) for k in range(2))
    return replace(best, box=box, confidence=min(max(confidence, 0.0), 1.0),
                   apex=_weighted_point(members, 0), contact=_weighted_point(members, 1),
                   keypoint_confidence=visibility)


def merge_looks(first: Sequence[Detection], second: Sequence[Detection], pair_iou: float,
                lone_weight: float, min_confidence: float) -> list[Detection]:
    """Pairs each detection of one look with the best-overlapping unpaired one of the other
    (boxes overlapping by more than `pair_iou`), most confident first, and keeps the objects whose
    merged confidence reaches `min_confidence`, best first.

    A pair's confidence is the mean of its two; a lone detection's is `lone_weight` times its own.
    """
    if not 0.0 < pair_iou < 1.0 or not 0.0 <= lone_weight <= 1.0:
        raise ValueError(f"pair_iou must be in (0, 1) and lone_weight in [0, 1], got {pair_iou}, {lone_weight}")
    order = sorted([(d, 0) for d in first] + [(d, 1) for d in second], key=lambda item: -item[0].confidence)
    groups: list[list[Detection]] = []
    looks: list[set[int]] = []
    for detection, look in order:
        candidates = [(box_iou(g[0].box, detection.box), i) for i, g in enumerate(groups) if look not in looks[i]]
        overlap, best = max(candidates, default=(0.0, -1))
        if overlap > pair_iou:
            groups[best].append(detection)
            looks[best].add(look)
        else:
            groups.append([detection])
            looks.append({look})
    out = []
    for members in groups:
        confidence = (sum(d.confidence for d in members) / 2 if len(members) == 2
                      else lone_weight * members[0].confidence)
        if confidence >= min_confidence:
            out.append(_merged(members, confidence))
    return sorted(out, key=lambda d: -d.confidence)

"""Command line: `companion calibrate camera ...` and `companion locate IMAGE --board ...`
(`add_vision_commands` adds both to the `companion` argument parser).
"""

from __future__ import annotations

import cv2

from companion.vision.locate.board import BOARD_KINDS, IMAGE_CORNERS, BoardNotFound, BoardSpec
from companion.vision.locate.drawing import annotate
from companion.vision.locate.locator import Locator


def add_vision_commands(sub) -> None:
    """Adds the `calibrate` and `locate` sub-commands to the `companion` argument parser."""
    from pathlib import Path

    p = sub.add_parser("calibrate", help="camera calibration from photos of a printed checkerboard")
    csub = p.add_subparsers(dest="what", required=True)
    c = csub.add_parser("camera", help="intrinsics from checkerboard or ChArUco photos (calibration/README.md)")
    c.add_argument("images", nargs="+", type=Path, help="photos of the printed target, one camera, one resolution")
    c.add_argument("--pattern", default="9x6", help="inner corners COLSxROWS (default 9x6)")
    c.add_argument("--square-mm", type=float, default=None,
                   help="side of one printed square in mm (default 25; 30 for the ChArUco sheet)")
    c.add_argument("--charuco", metavar="COLSxROWS",
                   help="the photos show the ChArUco sheet of this many squares (calibration/charuco-7x5-30mm.pdf: "
                        "7x5), not the checkerboard; it may be partly out of view")
    c.add_argument("--marker-mm", type=float, default=22.0,
                   help="with --charuco: side of its markers in mm (default 22)")
    c.add_argument("-o", "--output", type=Path, default=Path("calibration/camera.json"),
                   help="calibration file to write (default calibration/camera.json)")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.set_defaults(func=_cmd_calibrate_camera)

    p = sub.add_parser("locate", help="find the board in a photo and print where every cell is")
    p.add_argument("image", type=Path)
    p.add_argument("--board", required=True, choices=BOARD_KINDS)
    p.add_argument("--area", default="8x8", help="chess playing area FILESxRANKS: 8x8, 6x6, 8x4 (default 8x8)")
    p.add_argument("--hex-radius", type=int, default=3, help="rings round the centre cell of a hex board")
    p.add_argument("--hex-mm", type=float, default=20.0, help="hex cell size, centre to corner, mm")
    p.add_argument("--cell-mm", type=float, default=None, help="square cell side in mm")
    p.add_argument("--marker-mm", type=float, default=50.0,
                   help="side of the table marker, or of the corner markers laid round a board, in mm")
    p.add_argument("--a1", default="bottom-left", choices=IMAGE_CORNERS, help="image corner nearest a1 at set-up")
    p.add_argument("--intrinsics", type=Path, default=None, help="calibration file; the photo is undistorted first")
    p.add_argument("--annotate", type=Path, default=None, help="write the photo with the cells drawn on it")
    p.add_argument("--json", action="store_true", help="print the location as JSON")
    p.add_argument("--no-board-model", action="store_true",
                   help="find the board by its own cues only, without the board model (models/boards.pt)")
    p.set_defaults(func=_cmd_locate)


def _cmd_calibrate_camera(args) -> int:
    import json
    import sys

    from companion.vision.calibrate import (CalibrationError, CharucoTarget, calibrate_camera, parse_pattern,
                                            read_images, save_intrinsics)
    try:
        if args.charuco:
            squares = parse_pattern(args.charuco, "squares")
            target = CharucoTarget(squares, args.square_mm or 30.0, args.marker_mm)
            report = calibrate_camera(read_images(args.images), charuco=target)
        else:
            report = calibrate_camera(read_images(args.images), parse_pattern(args.pattern), args.square_mm or 25.0)
    except CalibrationError as exc:
        print(f"companion calibrate camera: {exc}", file=sys.stderr)
        return 2
    save_intrinsics(report.intrinsics, args.output)
    intr = report.intrinsics
    if args.json:
        json.dump({"file": str(args.output), "used": list(report.used), "rejected": list(report.rejected),
                   "intrinsics": intr.to_json()}, sys.stdout, indent=2)
        print()
    else:
        print(f"target found in {len(report.used)} of {len(report.used) + len(report.rejected)} photos")
        for name in report.rejected:
            print(f"  not found: {name}")
        print(f"reprojection error {intr.rms_px:.3f} px; fx {intr.camera_matrix[0][0]:.1f}, "
              f"fy {intr.camera_matrix[1][1]:.1f}; written to {args.output}")
    return 0


def _cmd_locate(args) -> int:
    import json
    import sys

    from companion.vision.calibrate import CalibrationError, load_intrinsics
    frame = cv2.imread(str(args.image), cv2.IMREAD_COLOR)
    if frame is None:
        print(f"companion locate: cannot read {args.image} as an image", file=sys.stderr)
        return 2
    try:
        kw = {"cell_mm": args.cell_mm} if args.cell_mm else ({"cell_mm": 27.0} if args.board == "coasters" else {})
        spec = BoardSpec(args.board, area=args.area, hex_radius=args.hex_radius, hex_mm=args.hex_mm,
                         marker_mm=args.marker_mm, a1_hint=args.a1, **kw)
        intr = load_intrinsics(args.intrinsics) if args.intrinsics else None
    except (ValueError, CalibrationError) as exc:
        print(f"companion locate: {exc}", file=sys.stderr)
        return 2
    board_model = None
    if not args.no_board_model:
        from companion.vision.board_finder import PLACED_KINDS, shipped_board_finder

        board_model = shipped_board_finder() if spec.kind in PLACED_KINDS else None
    locator = Locator(spec, intr, board_model=board_model)
    try:
        loc = locator.locate(frame)
    except BoardNotFound as exc:
        if args.json:
            json.dump({"found": False, "reason": exc.reason, "detail": exc.detail}, sys.stdout, indent=2)
            print()
        else:
            print(f"companion locate: {exc}", file=sys.stderr)
        return 1
    if args.annotate:
        cv2.imwrite(str(args.annotate), annotate(locator.prepare(frame), loc))
    if args.json:
        json.dump({"found": True, **loc.to_json()}, sys.stdout, indent=2)
        print()
    else:
        corners = ", ".join(f"({x:.1f}, {y:.1f})" for x, y in loc.corners)
        print(f"{spec.kind} board found by {loc.method} in {loc.elapsed_ms:.0f} ms, confidence {loc.confidence:.2f}")
        print(f"playing-area corners (a1's first): {corners}")
        for cell in loc.cells():
            print(f"  {cell.name:6} {cell.centre[0]:8.1f} {cell.centre[1]:8.1f}")
        if args.annotate:
            print(f"annotated image: {args.annotate}")
    return 0

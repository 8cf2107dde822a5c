"""Writes the printable calibration targets in this folder (PNG and PDF, A4, 300 dpi).

    python calibration/make_targets.py [--out calibration]

- checkerboard-9x6-25mm: the camera-calibration target (9x6 inner corners, 25 mm squares).
- table-marker-50mm: ArUco marker 0 (DICT_4X4_50), 50 mm, for the bare-table (IceTowers) plane.
- charuco-7x5-30mm: a ChArUco board, an alternative target that tolerates partial views.
- corner-markers-50mm: ArUco markers 1-4, 50 mm, to lay at a board's corners when it cannot be
  found by itself (`companion.vision.locate.corner_marker_squares`).

Markers come from OpenCV's own aruco module. Print at 100 % ("actual size"), then measure a
square with a ruler: the calibration uses the size you pass to --square-mm.
"""

from __future__ import annotations

import argparse
import zlib
from pathlib import Path

import cv2
import numpy as np

from companion.vision.calibrate import checkerboard_target

DPI = 300
A4_MM = (210.0, 297.0)


def mm(v: float) -> int:
    return int(round(v / 25.4 * DPI))


def on_a4(image: np.ndarray, caption: str, landscape: bool = False) -> np.ndarray:
    w_mm, h_mm = (A4_MM[1], A4_MM[0]) if landscape else A4_MM
    page = np.full((mm(h_mm), mm(w_mm)), 255, np.uint8)
    h, w = image.shape
    if h > page.shape[0] - mm(12) or w > page.shape[1]:
        raise ValueError(f"{caption}: {w}x{h} px does not fit on A4")
    y0, x0 = (page.shape[0] - mm(12) - h) // 2, (page.shape[1] - w) // 2
    page[y0:y0 + h, x0:x0 + w] = image
    cv2.putText(page, caption, (mm(12), page.shape[0] - mm(4)), cv2.FONT_HERSHEY_SIMPLEX, 1.6, 0, 3, cv2.LINE_AA)
    return page


# Which corner of each corner marker's black square touches the board's corner (marker 1 at a1's;
# printed upright, the markers are laid reading upright from a1's side): see corner_marker_squares.
TOUCHING = {1: "top-right", 2: "top-left", 3: "bottom-left", 4: "bottom-right"}


def corner_markers_page(aruco, side_mm: float = 50.0) -> np.ndarray:
    """Markers 1-4 on one A4 page, each with a triangle at the corner that touches the board."""
    page = np.full((mm(297), mm(210)), 255, np.uint8)
    side, cell = mm(side_mm), mm(95)
    for k, marker in enumerate((4, 3, 1, 2)):  # as they lie round the board, seen from a1's side
        x0, y0 = mm(10) + (k % 2) * cell + (cell - side) // 2, mm(25) + (k // 2) * mm(125)
        page[y0:y0 + side, x0:x0 + side] = cv2.aruco.generateImageMarker(aruco, marker, side)
        at = TOUCHING[marker]
        cx = x0 + side + mm(2) if at.endswith("right") else x0 - mm(2)
        cy = y0 - mm(2) if at.startswith("top") else y0 + side + mm(2)
        dx, dy = (mm(6) if at.endswith("right") else -mm(6)), (-mm(6) if at.startswith("top") else mm(6))
        cv2.fillConvexPoly(page, np.array([(cx, cy), (cx + dx, cy), (cx, cy + dy)], np.int32), 0)
        label = f"corner marker {marker}" + (" (a1)" if marker == 1 else "")
        cv2.putText(page, label, (x0, y0 + side + mm(14)), cv2.FONT_HERSHEY_SIMPLEX, 1.6, 0, 3, cv2.LINE_AA)
    caption = "Icehouse Companion: ArUco 4x4_50 markers 1-4, 50 mm. Marked corner on the board's corner, outside it."
    cv2.putText(page, caption, (mm(8), page.shape[0] - mm(6)), cv2.FONT_HERSHEY_SIMPLEX, 1.25, 0, 3, cv2.LINE_AA)
    return page


def write_pdf(gray: np.ndarray, path: Path) -> None:
    """A one-page PDF holding the image at exactly DPI (lossless, so edges stay sharp)."""
    h, w = gray.shape
    pw, ph = w / DPI * 72, h / DPI * 72
    data = zlib.compress(gray.tobytes(), 9)
    content = f"q {pw:.2f} 0 0 {ph:.2f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.2f} {ph:.2f}] /Resources << /XObject << /Im0 5 0 R >> >> "
        f"/Contents 4 0 R >>".encode(),
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream",
        f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray /BitsPerComponent 8 "
        f"/Filter /FlateDecode /Length {len(data)} >>\nstream\n".encode() + data + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    aruco = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    pages = {
        "checkerboard-9x6-25mm": on_a4(checkerboard_target((9, 6), 25.0, DPI, margin_mm=5.0),
                                       "Icehouse Companion: 9x6 inner corners, 25 mm squares", landscape=True),
        "table-marker-50mm": on_a4(np.pad(cv2.aruco.generateImageMarker(aruco, 0, mm(50)), mm(10), constant_values=255),
                                   "Icehouse Companion: table marker 0 (ArUco 4x4_50), 50 mm"),
        "charuco-7x5-30mm": on_a4(cv2.aruco.CharucoBoard((7, 5), 30.0, 22.0, aruco).generateImage((mm(210), mm(150)),
                                                                                                 marginSize=mm(5)),
                                  "Icehouse Companion: ChArUco 7x5, 30 mm squares, 22 mm markers", landscape=True),
        "corner-markers-50mm": corner_markers_page(aruco),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for name, page in pages.items():
        cv2.imwrite(str(args.out / f"{name}.png"), page, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        write_pdf(page, args.out / f"{name}.pdf")
        print(f"wrote {args.out / name}.png and .pdf")


if __name__ == "__main__":
    main()

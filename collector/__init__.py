"""evald's daemon and offline tools; the layout is docs/adr/0013-package-layout.md."""

from collector.core import interpreted as _interpreted

if _interpreted.requested():
    _interpreted.install()

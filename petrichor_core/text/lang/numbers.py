"""Numbers, dates, units and money as Chinese and English write them: numerals and their values, measure
words, magnitudes, currencies and the shapes of years, dates, counts and amounts.
"""

from __future__ import annotations

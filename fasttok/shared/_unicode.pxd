# C-level view of the generated Unicode 16.0.0 tables (fasttok/shared/unicode_tables.h).
#
# Other compiled modules `from fasttok.shared._unicode cimport ft_class, FT_L` and call
# these inside `with nogil:` loops; they are static inline C over static const
# arrays, so a call costs two or three loads and never touches Python.

from libc.stdint cimport uint8_t, uint16_t, uint32_t


cdef extern from "unicode_tables.h" nogil:
    const char *FT_UNICODE_VERSION

    # General category codes (ft_general_category's results).
    enum:
        FT_GC_Cn
        FT_GC_Lu
        FT_GC_Ll
        FT_GC_Lt
        FT_GC_Lm
        FT_GC_Lo
        FT_GC_Mn
        FT_GC_Mc
        FT_GC_Me
        FT_GC_Nd
        FT_GC_Nl
        FT_GC_No
        FT_GC_Pc
        FT_GC_Pd
        FT_GC_Ps
        FT_GC_Pe
        FT_GC_Pi
        FT_GC_Pf
        FT_GC_Po
        FT_GC_Sm
        FT_GC_Sc
        FT_GC_Sk
        FT_GC_So
        FT_GC_Zs
        FT_GC_Zl
        FT_GC_Zp
        FT_GC_Cc
        FT_GC_Cf
        FT_GC_Cs
        FT_GC_Co

    # Class bits (ft_class's results), for scanners.
    enum:
        FT_L        # Lu Ll Lt Lm Lo
        FT_N        # Nd Nl No
        FT_WS       # White_Space property (what regex \s means)
        FT_M        # Mn Mc Me
        FT_LU_LT    # Lu Lt
        FT_LL       # Ll
        FT_LM_LO    # Lm Lo
        FT_P        # Pc Pd Ps Pe Pi Pf Po
        FT_S        # Sm Sc Sk So
        FT_ND       # Nd

    # FT_GC_* code; FT_GC_Cn for unassigned code points and cp >= 0x110000.
    uint8_t ft_general_category(uint32_t cp)
    # 1 if cp has the White_Space property, else 0.
    int ft_is_white_space(uint32_t cp)
    # FT_* bits of cp.
    uint16_t ft_class(uint32_t cp)
    # The ASCII lowercase letter cp simple-case-folds together with, or 0.
    uint32_t ft_simple_fold_to_ascii_lower(uint32_t cp)

#ifndef REEL_CEBUR128_SHIM_H
#define REEL_CEBUR128_SHIM_H
/* libebur128: loudness (ITU-R BS.1770-4, EBU R128 gating), loudness range and true peak. */
#include <ebur128.h>
#endif

#ifndef REEL_CRUBBERBAND_SHIM_H
#define REEL_CRUBBERBAND_SHIM_H
#include <rubberband/rubberband-c.h>
#endif

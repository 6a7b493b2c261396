// The whole public API of skv in one include.
#ifndef SKV_SKV_H_
#define SKV_SKV_H_

#include "skv/future.h"
#include "skv/iterator.h"
#include "skv/options.h"
#include "skv/platform.h"
#include "skv/platform_wrapper.h"
#include "skv/queue_executor.h"
#include "skv/status.h"
#include "skv/transaction.h"
#include "skv/tree.h"
#include "skv/version.h"

#endif  // SKV_SKV_H_

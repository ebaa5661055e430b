/*
 * The code points every output shows as escapes (see fdx.h): one set for the
 * programs' tables and JSON and for fdx-report, so that what one shows as
 * itself no other hides, and no value passes for another in any of them.
 */
#include <stdint.h>

#include "fdx.h"

int fdx_code_point_escaped(uint32_t c)
{
    static const uint32_t ranges[][2] = {
        {0x7F, 0x9F},      {0xA0, 0xA0},     {0xAD, 0xAD},       {0x34F, 0x34F},
        {0x61C, 0x61C},    {0x115F, 0x1160}, {0x1680, 0x1680},   {0x17B4, 0x17B5},
        {0x180B, 0x180F},  {0x2000, 0x200F}, {0x2028, 0x202F},   {0x205F, 0x206F},
        {0x3000, 0x3000},  {0x3164, 0x3164}, {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},
        {0xFFA0, 0xFFA0},  {0xFFF0, 0xFFFB}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
        {0xE0000, 0xE0FFF}};
    if (c < 0x20)
        return 1;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (c >= ranges[i][0] && c <= ranges[i][1])
            return 1;
    return 0;
}

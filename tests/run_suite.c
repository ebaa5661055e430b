/* Runs the one Check suite this test program was built with (FDX_SUITE). */
#include <check.h>
#include <stdlib.h>

Suite *FDX_SUITE(void);

int main(void)
{
    SRunner *sr = srunner_create(FDX_SUITE());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

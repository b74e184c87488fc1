#define TESTING
#include "gqa.c"
#include "tap.h"
int main(void){done_testing();return 0;}

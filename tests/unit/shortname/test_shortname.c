/* SPDX-License-Identifier: MIT */
/* Unit test of the readable C++ names (analyzer/shortname.c): names as libiberty demangles them
 * from g++'s and libstdc++'s symbols, each with the short form a person should read. */
#include <stdio.h>
#include <string.h>

#include "shortname.h"

static const char *const cases[][2] = {
    {"main", "main"},
    {"leak_in_c", "leak_in_c"},
    {"foo(int)", "foo"},
    {"ns::Widget::grow(unsigned long) const", "ns::Widget::grow"},
    {"std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::"
     "__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
     "std::vector<…>::_M_realloc_insert<…>"},
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > std::operator+"
     "<char, std::char_traits<char>, std::allocator<char> >(char const*, std::__cxx11::basic_string<"
     "char, std::char_traits<char>, std::allocator<char> > const&)",
     "std::operator+<…>"},
    {"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >("
     "std::basic_ostream<char, std::char_traits<char> >&, char const*)",
     "std::operator<< <…>"},
    {"Matrix::operator()(int, int)", "Matrix::operator()"},
    {"Ptr<Node>::operator->() const", "Ptr<…>::operator->"},
    {"bool operator<(Key const&, Key const&)", "operator<"},
    {"Version::operator<=>(Version const&) const", "Version::operator<=>"},
    {"operator new(unsigned long)", "operator new"},
    {"operator delete[](void*, unsigned long)", "operator delete[]"},
    {"Handle::operator char const*() const", "Handle::operator char const*"},
    {"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"},
    {"(anonymous namespace)::Cache::fill()", "(anonymous namespace)::Cache::fill"},
    {"main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()"},
    {"void std::_Destroy<Item*>(Item*, Item*) [clone .isra.0]", "std::_Destroy<…>"},
    {"int* std::__new_allocator<int>::allocate(unsigned long, void const*)",
     "std::__new_allocator<…>::allocate"},
    {"leak::make_vec::h1a2b3c4d5e6f7a8b", "leak::make_vec::h1a2b3c4d5e6f7a8b"},
    /* more C++: operators, lambdas, anonymous namespaces, a long libstdc++ name */
    {"std::basic_istream<char, std::char_traits<char> >& std::operator>><char, std::char_traits<char>, "
     "std::allocator<char> >(std::basic_istream<char, std::char_traits<char> >&, std::__cxx11::"
     "basic_string<char, std::char_traits<char>, std::allocator<char> >&)",
     "std::operator>><…>"},
    {"Pool::operator new[](unsigned long)", "Pool::operator new[]"},
    {"Cell::operator=(Cell&&)", "Cell::operator="},
    {"Counter::operator++(int)", "Counter::operator++"},
    {"void std::__invoke_impl<void, main::{lambda()#2}>(std::__invoke_other, main::{lambda()#2}&&)",
     "std::__invoke_impl<…>"},
    {"run(int)::{lambda(int)#1}::operator()(int) const", "run(int)::{lambda(int)#1}::operator()"},
    {"(anonymous namespace)::Widget<int>::~Widget()", "(anonymous namespace)::Widget<…>::~Widget"},
    {"std::_Hashtable<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
     "std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, "
     "int>, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const, int> >, std::__detail::_Select1st, std::equal_to<std::__cxx11::"
     "basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::hash<std::__cxx11::"
     "basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::__detail::"
     "_Mod_range_hashing, std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, "
     "std::__detail::_Hashtable_traits<true, false, true> >::_M_insert_unique_node(unsigned long, "
     "unsigned long, std::__detail::_Hash_node<std::pair<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > const, int>, true>*, unsigned long)",
     "std::_Hashtable<…>::_M_insert_unique_node"},
    /* Rust: a qualified path keeps its <Type as Trait>, each by its last segment */
    {"<alloc::vec::Vec<T> as core::clone::Clone>::clone", "<Vec<…> as Clone>::clone"},
    {"<T as Trait>::f", "<T as Trait>::f"},
    {"<&mut alloc::string::String as core::fmt::Write>::write_str", "<&mut String as Write>::write_str"},
    {"<alloc::vec::Vec<T,A> as alloc::vec::spec_extend::SpecExtend<T,I>>::spec_extend",
     "<Vec<…> as SpecExtend<…>>::spec_extend"},
    {"<dyn core::any::Any>::is", "<dyn Any>::is"},
    {"alloc::raw_vec::RawVec<T,A>::grow_one", "alloc::raw_vec::RawVec<…>::grow_one"},
    {"core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place<…>"},
    {"std::rt::lang_start::{{closure}}", "std::rt::lang_start::{{closure}}"},
    {"<F as core::ops::function::FnOnce<()>>::call_once{{vtable.shim}}",
     "<F as FnOnce<…>>::call_once{{vtable.shim}}"},
    /* C names are left as they are */
    {"__libc_start_call_main", "__libc_start_call_main"},
};

int main(void)
{
	int failures = 0;
	char buf[256], tiny[8];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = ct_short_name(cases[i][0], buf, sizeof(buf));
		int ok = !strcmp(got, cases[i][1]);
		printf("%s %s -> %s%s%s\n", ok ? "ok  " : "FAIL", cases[i][0], got, ok ? "" : ", want ",
		       ok ? "" : cases[i][1]);
		failures += !ok;
	}
	ct_short_name("ns::Widget::grow(unsigned long)", tiny, sizeof(tiny));
	int ok = !strcmp(tiny, "ns::Wid");
	printf("%s a short buffer gets what fits: %s\n", ok ? "ok  " : "FAIL", tiny);
	failures += !ok;
	printf("%s\n", failures ? "FAIL" : "ok   all names");
	return failures ? 1 : 0;
}
